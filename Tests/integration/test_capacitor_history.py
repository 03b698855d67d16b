"""A Capacitor app's one web view goes back across documents (docs/CAPACITOR.md, "Native
navigation"): after the app loaded a second document of its own in the web view, the page's
`history.back()` takes that same web view back to the first document, as a device's web view
does; nothing is stacked or popped and no web view closes. Real Chromium, the test app
(Tests/integration/capacitor_app), both platforms."""
import pytest

from bridgeclient import controller
from browser_sessions_support import TIMEOUT, evaluate, run
from test_capacitor import PLATFORMS, app_url, start  # noqa: F401


def ready(s, url_end):
    return lambda p: p["session"] == s and p["webview"] == "W1" and p["url"].endswith(url_end)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_history_back_across_documents_stays_in_the_web_view(daemon, app_url, platform):
    async def go():
        c = await controller(daemon.ws_url)
        s = await start(c, app_url, "index.html", platform)
        # The app loads another document of its own: the same web view, a new document.
        await evaluate(c, s, "W1", f"location.assign({app_url + '/v3.html'!r}), true")
        await c.next_event("capacitor.ready", TIMEOUT, where=ready(s, "/v3.html"))
        assert await evaluate(c, s, "W1", "history.length") >= 2
        # The page goes back: the first document again, in W1.
        await evaluate(c, s, "W1", "history.back(), true")
        await c.next_event("capacitor.ready", TIMEOUT, where=ready(s, "/index.html"))
        assert (await evaluate(c, s, "W1", "location.pathname")) == "/index.html"
        got = await c.request("session.get", {"session": s})
        assert [i["id"] for i in got["stack"]] == ["W1"]
        assert not [p for p in c.events("webview.closed") if p["session"] == s]
        assert not [p for p in c.events("webview.open") if p["session"] == s and p["webview"] != "W1"]
        await c.close()

    run(go())
