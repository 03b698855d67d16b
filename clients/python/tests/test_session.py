"""Session on plain sessions (pages by hand): stack notation, navigation, wait_rendered."""
import pytest

import bridged
from conftest import Page


def test_stack_in_the_seeds_notation(bridged_controller, page_of):
    s = bridged_controller.create_session("http://127.0.0.1/app/")
    assert s.stack == "W1(*C)~", "no page connected yet"
    page = page_of(session=s.id, webview="W1", token=s.created["token"])
    assert s.stack == "W1(*C)"
    page.request("pwa-navigate", {"url": "http://127.0.0.1/app/#/a"})
    assert s.stack == "P1 W1(*P)"
    result = s.navigate("http://127.0.0.1/app/classic.html")
    assert result["webview"] == "W2"
    assert s.stack == "P1 W1(*P)~ W2(*C)~", "single-tab mode: the page was sent `load`"
    assert s.top_webview == "W2"
    assert [i["id"] for i in s.items] == ["P1", "W1", "W2"]
    assert s.back()["action"] == "pop"
    assert s.stack == "P1 W1(*P)~"


def test_render_stack_matches_the_daemons_rendering():
    items = [{"id": "P1", "kind": "placeholder", "of": "W1"},
             {"id": "W1", "kind": "webview", "mode": "pwa", "connected": True},
             {"id": "W2", "kind": "webview", "mode": "classic", "connected": False},
             {"id": "N1", "kind": "native"}]
    assert bridged.render_stack(items) == "P1 W1(*P) W2(*C)~ N1"
    assert bridged.stack_ids(items) == "P1 W1 W2 N1"
    assert bridged.render_stack([]) == ""


def test_wait_rendered_returns_at_once_without_a_foreground(bridged_controller):
    s = bridged_controller.create_session("http://127.0.0.1/app/")
    assert s.wait_rendered(timeout=1)["foreground"] is None


def test_wait_rendered_waits_for_the_pages_pwa_rendered(bridged_controller, page_of):
    s = bridged_controller.create_session("http://127.0.0.1/app/")
    page = page_of(session=s.id, webview="W1", token=s.created["token"])
    page.request("pwa-navigate", {})
    assert s.get()["foreground"]["kind"] == "blank"
    page.request("pwa-rendered", {})
    assert s.wait_rendered()["foreground"] is None
    assert bridged_controller.wait_event("foreground.removed", session=s.id)["reason"] == "rendered"


def test_wait_rendered_times_out_while_a_foreground_is_up(bridged_controller, page_of):
    s = bridged_controller.create_session("http://127.0.0.1/app/")
    page = page_of(session=s.id, webview="W1", token=s.created["token"])
    page.request("pwa-navigate", {})
    with pytest.raises(TimeoutError) as e:
        s.wait_rendered(timeout=0.3)
    assert "foreground" in str(e.value)
    page.request("pwa-rendered", {})
    assert s.wait_rendered()["foreground"] is None


def test_wait_rendered_follows_a_back_swap_to_its_timeout():
    with bridged.Daemon(args=["--foreground-timeout-ms", "200", "--drain-ms", "0"]) as d, d.controller() as c:
        s = c.create_session("http://127.0.0.1/app/")
        page = Page(d.ws_url, session=s.id, webview="W1", token=s.created["token"])
        page.request("pwa-navigate", {})
        page.request("pwa-rendered", {})
        assert s.back()["action"] == "swap"  # a placeholder foreground; the page never renders
        assert s.get()["foreground"]["kind"] == "placeholder"
        assert s.wait_rendered()["foreground"] is None
        reasons = [c.wait_event("foreground.removed", session=s.id)["reason"] for _ in range(2)]
        assert reasons == ["rendered", "timeout"]
        page.close()


def test_browser_methods_on_a_plain_session_are_invalid_params(bridged_controller):
    s = bridged_controller.create_session("http://127.0.0.1/app/")
    with pytest.raises(bridged.BridgeError) as e:
        s.evaluate("1")
    assert e.value.code == "invalid-params"


def test_close_is_idempotent_and_a_session_is_a_context_manager(bridged_controller):
    with bridged_controller.create_session("http://127.0.0.1/app/") as s:
        assert s.get()["session"] == s.id
    s.close()
    with pytest.raises(bridged.BridgeError) as e:
        s.get()
    assert e.value.code == "unknown-session"


def test_a_sessions_events(bridged_controller, page_of):
    """Session.events and wait_event: the controller's events of this session only."""
    other = bridged_controller.create_session("http://127.0.0.1/app/")
    s = bridged_controller.create_session("http://127.0.0.1/app/")
    page_of(session=other.id, webview="W1", token=other.created["token"])
    page_of(session=s.id, webview="W1", token=s.created["token"])
    connected = s.wait_event("page.connected", webview="W1")
    assert connected["session"] == s.id
    assert [e.params["session"] for e in other.events("page.connected")] == [other.id]
    assert s.events("page.connected") == []  # consumed by the wait
    with pytest.raises(TimeoutError):
        s.wait_event("page.connected", timeout=0.2)
