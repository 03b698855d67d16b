"""Connection: one WebSocket connection of any role, the transport under Controller (and the
project's integration tests): hello as a page, frames by hand (text that is not JSON, binary,
fragments), close codes, refused upgrades, waits from several threads."""
import threading
import time

import pytest

import bridged


def test_a_page_by_hand(bridged_daemon, bridged_controller):
    with bridged.Connection(bridged_daemon.ws_url, timeout=10) as page:
        hello = page.say_hello("page", url="http://127.0.0.1/app/")
        assert page.hello_result == hello and hello["webview"] == "W1"
        sid = hello["session"]
        assert bridged_controller.wait_event("stack.changed", session=sid)["cause"] == "hello"
        placeholder = page.request("pwa-navigate", {"url": "http://127.0.0.1/app/#/a"})
        assert placeholder["placeholder"] == "P1"
        assert page.call("pwa-rendered")["removed"] is True
        # An error reply: BridgeError from request, the whole frame from call_frame.
        with pytest.raises(bridged.BridgeError) as e:
            page.request("session.list")
        assert e.value.code == "not-allowed"
        frame = page.call_frame("session.list")
        assert frame["error"]["code"] == "not-allowed" and isinstance(frame["id"], int)
        assert page.close_code is None


def test_frames_by_hand_are_recorded_in_order(bridged_daemon):
    with bridged.Connection(bridged_daemon.ws_url, timeout=10, record=True) as raw:
        raw.send_text("{not json")
        raw.send_bytes(b"\x00\x01")
        raw.send_fragments(['{"id":41,', '"method":"ping",', '"params":{}}'])
        raw.send({"id": 42, "method": "ping"})
        assert raw.wait_reply(42)[0]["error"]["code"] == "not-ready"  # no hello yet
        assert [f["error"]["code"] for f in raw.frames] == ["parse-error", "invalid-request", "not-ready", "not-ready"]
        assert [f["id"] for f in raw.frames] == [None, None, 41, 42]
        assert raw.take_reply(41)["id"] == 41  # kept until taken
        assert raw.take_reply(41) is None
        # Ids from send_request never collide with each other.
        assert raw.send_request("ping") != raw.send_request("ping")


def test_the_close_code_of_a_page_the_daemon_closes(bridged_daemon, bridged_controller):
    seen = []
    page = bridged.Connection(bridged_daemon.ws_url, timeout=10, listener=seen.append)
    sid = page.say_hello("page", url="http://127.0.0.1/app/")["session"]
    # A classic navigation from the controller: the page is sent `load`, then closed with 1000.
    bridged_controller.call("navigation.navigateToUrl", session=sid, url="http://127.0.0.1/app/classic")
    assert page.wait_event("load", timeout=10)["webview"] == "W2"
    assert page.wait_closed(10) == 1000 and page.close_code == 1000
    with pytest.raises(bridged.ConnectionClosed) as e:
        page.request("ping")
    assert e.value.code == 1000
    page.close()
    assert seen[0]["result"]["session"] == sid and seen[-1] is None, "the listener sees every frame, then None"


def test_an_oversized_message_is_closed_with_1009():
    with bridged.Daemon(args=["--max-message-bytes", "1000", "--drain-ms", "0"]) as d:
        with bridged.Connection(d.ws_url) as c:
            c.send_text("x" * 2000)
            assert c.wait_closed(10) == 1009


def test_a_refused_upgrade_raises_handshake_refused(bridged_daemon):
    with pytest.raises(bridged.HandshakeRefused) as e:
        bridged.Connection(bridged_daemon.ws_url, origin="http://evil.example")
    assert e.value.status == 403
    with bridged.Connection(bridged_daemon.ws_url, origin="http://127.0.0.1:5173") as local:
        assert local.call_frame("ping")["error"]["code"] == "not-ready"


def test_a_wait_in_one_thread_does_not_hold_up_a_call_in_another(bridged_controller):
    got = {}

    def waiter():
        got["event"] = bridged_controller.wait_event("session.created", timeout=10)

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.1)  # the waiter is waiting (it would also find the event afterwards)
    created = bridged_controller.call("session.create", url="http://127.0.0.1/app/t")
    thread.join(10)
    assert got["event"]["session"] == created["session"]


def test_a_wait_for_the_close_times_out_while_open(bridged_daemon):
    with bridged.Connection(bridged_daemon.ws_url) as c:
        with pytest.raises(TimeoutError):
            c.wait_closed(0.2)
        assert c.close_code is None
