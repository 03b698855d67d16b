"""A browser session on the Astro demo, driven only through the library (the issue's bar)."""
import pytest

import bridged


@pytest.fixture
def astro(bridged_daemon, bridged_controller):
    return bridged_controller.create_session(bridged_daemon.url("/app/astro.html"), browser=True)


def test_the_astro_demo_click_render_back(bridged_daemon, bridged_controller, astro):
    assert astro.stack == "W1(*C)"
    assert astro.evaluate("document.body.dataset.inApp") == "true"
    assert astro.evaluate(expr="1 + 1", webview=None) == 2
    # The PWA's own link: pwa-navigate, a placeholder, a foreground until pwa-rendered.
    astro.click("#astro-deals")
    state = astro.wait_rendered()
    assert state["foreground"] is None
    assert astro.stack == "P1 W1(*P)"
    assert astro.evaluate("document.body.dataset.view") == "deals"
    removed = bridged_controller.wait_event("foreground.removed", session=astro.id)
    assert removed["reason"] == "rendered"

    jpeg = astro.screenshot()
    assert jpeg[:3] == b"\xff\xd8\xff" and jpeg[-2:] == b"\xff\xd9"

    # Back: a swap, the page goes back in its own history and renders again.
    assert astro.back()["action"] == "swap"
    astro.wait_rendered()
    assert astro.stack == "W1(*P)"
    assert astro.evaluate("document.body.dataset.view") == "start"
    assert astro.back()["action"] == "none"

    with pytest.raises(bridged.BridgeError) as bad:
        astro.click("#no-such-link")
    assert bad.value.code == "browser-error"
    assert "#no-such-link" in bad.value.message
    with pytest.raises(bridged.BridgeError) as unknown:
        astro.evaluate("1", webview="W9")
    assert unknown.value.code == "unknown-webview"


def test_type_into_the_page(astro):
    astro.evaluate("document.body.insertAdjacentHTML('beforeend', '<input id=q>'); 1")
    astro.type("#q", "tea pot")
    assert astro.evaluate("document.getElementById('q').value") == "tea pot"


def test_navigate_opens_a_tab_on_top_and_back_closes_it(bridged_daemon, bridged_controller, astro):
    result = astro.navigate(bridged_daemon.url("/app/classic.html"))
    assert result["webview"] == "W2"
    bridged_controller.wait_event("page.connected", timeout=30, session=astro.id, webview="W2")
    assert astro.stack == "W1(*C) W2(*C)"
    assert astro.top_webview == "W2"
    # webview=None is the top web view.
    assert astro.evaluate("location.pathname") == "/app/classic.html"
    assert astro.evaluate("location.pathname", webview="W1") == "/app/astro.html"
    assert astro.back()["removed"] == ["W2"]
    assert astro.stack == "W1(*C)"


def test_closing_the_controller_closes_its_sessions(bridged_daemon):
    with bridged_daemon.controller() as watcher:
        with bridged_daemon.controller() as c:
            s = c.create_session(bridged_daemon.url("/app/astro.html"), browser=True)
        closed = watcher.wait_event("session.closed", timeout=10, session=s.id)
        assert closed["reason"] == "closed"
        with pytest.raises(bridged.BridgeError) as gone:
            watcher.call("session.get", session=s.id)
        assert gone.value.code == "unknown-session"
