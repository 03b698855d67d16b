"""Controller: calls, error replies, the event buffer and its bound."""
import pytest

import bridged


def test_call_returns_the_result(bridged_controller):
    assert bridged_controller.call("ping") == {}
    assert bridged_controller.hello["protocol"] == 1
    assert bridged_controller.hello["controller"].startswith("c")
    created = bridged_controller.call("session.create", url="http://127.0.0.1/app/")
    assert created["webview"] == "W1"
    got = bridged_controller.call("session.get", session=created["session"])
    assert got["session"] == created["session"]


def test_an_error_reply_raises_bridge_error_with_code_and_message(bridged_controller):
    with pytest.raises(bridged.BridgeError) as e:
        bridged_controller.call("session.get", session="s-0000000000000000")
    assert e.value.code == "unknown-session"
    assert "s-0000000000000000" in e.value.message
    assert e.value.method == "session.get"
    with pytest.raises(bridged.BridgeError) as e:
        bridged_controller.call("no.such.method")
    assert e.value.code == "unknown-method"
    with pytest.raises(bridged.BridgeError) as e:
        bridged_controller.call("session.get")
    assert e.value.code == "invalid-params"
    # The connection is still usable after errors.
    assert bridged_controller.call("ping") == {}


def test_an_event_that_arrived_before_the_wait_is_not_missed(bridged_controller, page_of):
    page = page_of()
    sid = page.hello["session"]
    bridged_controller.call("ping")  # the events of the hello have arrived by now
    assert [e.params["session"] for e in bridged_controller.events("session.created")][-1] == sid
    params = bridged_controller.wait_event("session.created", session=sid)
    assert params["session"] == sid
    # Consumed: a second wait for the same event does not see it again.
    with pytest.raises(TimeoutError) as e:
        bridged_controller.wait_event("session.created", timeout=0.2, session=sid)
    assert "session.created" in str(e.value)


def test_wait_event_matches_params_by_value_and_by_predicate(bridged_controller, page_of):
    a = page_of()
    b = page_of()
    sb = b.hello["session"]
    # The oldest matching event is taken: b's, though a's came first.
    got = bridged_controller.wait_event("stack.changed", session=sb)
    assert got["session"] == sb and got["cause"] == "hello"
    got = bridged_controller.wait_event("stack.changed", stack=lambda items: items[0]["id"] == "W1")
    assert got["session"] == a.hello["session"]


def test_the_event_buffer_keeps_the_newest_events_up_to_its_limit(bridged_daemon):
    with bridged_daemon.controller(max_buffered_events=4) as small, bridged_daemon.controller(subscribe=False) as maker:
        assert small.max_buffered_events == 4
        for i in range(2):  # each session.create sends session.created and stack.changed: 4 events
            maker.call("session.create", url=f"http://127.0.0.1/app/{i}")
        small.call("ping")
        assert len(small.events()) == 4 and small.dropped_events == 0, "at the limit nothing is dropped"
        made = [maker.call("session.create", url="http://127.0.0.1/app/x")["session"] for _ in range(2)]
        small.call("ping")
        kept = small.events()
        assert len(kept) == 4 and small.dropped_events == 4
        assert {e.params["session"] for e in kept} == set(made), "the oldest were dropped"
    with pytest.raises(ValueError):
        bridged.Controller(bridged_daemon.ws_url, max_buffered_events=0)
    assert bridged.DEFAULT_MAX_BUFFERED_EVENTS == 10_000


def test_a_controller_without_subscription_gets_only_its_sessions_events(bridged_daemon, page_of):
    with bridged_daemon.controller(subscribe=False) as c:
        page_of()
        s = c.create_session("http://127.0.0.1/app/")
        c.call("ping")
        assert {e.params["session"] for e in c.events()} == {s.id}


def test_a_token_is_passed_on_by_the_daemon():
    with bridged.Daemon(args=["--token", "secret-token", "--drain-ms", "0"]) as d:
        assert d.token == "secret-token"
        with d.controller() as c:
            assert c.call("ping") == {}
        with pytest.raises(bridged.BridgeError) as e:
            bridged.Controller(d.ws_url)
        assert e.value.code == "not-allowed"


def test_a_token_given_as_token_equals_is_found_too():
    with bridged.Daemon(args=["--token=other-token", "--drain-ms", "0"]) as d:
        assert d.token == "other-token"
        with d.controller() as c:
            assert c.call("ping") == {}


def test_a_closed_connection_raises_connection_closed():
    with bridged.Daemon(args=["--drain-ms", "0"]) as d:
        c = bridged.Controller(d.ws_url)  # not d.controller(): the daemon would close that one first
        assert c.call("ping") == {}
        d.stop()
        with pytest.raises(bridged.ConnectionClosed) as e:
            c.call("ping")
        assert e.value.code == 1001


def test_a_call_without_a_reply_times_out():
    """A server that answers hello and subscribe, then nothing: call() gives up after its timeout."""
    import json
    import threading

    from websockets.sync.server import serve

    def handler(ws):
        for message in ws:
            frame = json.loads(message)
            if frame["method"] in ("hello", "session.subscribe"):
                ws.send(json.dumps({"id": frame["id"], "result": {"protocol": 1}}))

    with serve(handler, "127.0.0.1", 0) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.socket.getsockname()[1]
        with bridged.Controller(f"ws://127.0.0.1:{port}/bridge", timeout=0.2) as c:
            assert bridged.Controller.__init__.__kwdefaults__["timeout"] == bridged.DEFAULT_CALL_TIMEOUT == 60
            with pytest.raises(TimeoutError, match="ping: no reply within 0.2 s"):
                c.call("ping")
            with pytest.raises(TimeoutError, match="within 0.1 s"):
                c.request("ping", timeout=0.1)
        server.shutdown()
