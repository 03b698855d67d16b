"""Hotwire Native's tab bar (docs/HOTWIRE.md, "Tabs"): a `hotwire-native` session with `tabs`
gives each tab its own navigator and web view; `router.selectTab` selects one (its web view
opens on the tab's URL the first time), a page's visits stack in its own tab, and
`navigation.back` pops the selected tab's screen. Real Chromium, the Turbo test app, both
platforms."""
import pytest

from bridgeclient import controller
from browser_sessions_support import TIMEOUT, evaluate, run, wait_until
from hotwire_support import PLATFORMS, app_fixture, hotwire_app, loaded, paths, rendered, stack_changed, start, tree  # noqa: F401

app = app_fixture()


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tabs_each_have_a_navigator(daemon, app, platform):
    async def go():
        c = await controller(daemon.ws_url)
        tabs = [{"title": "Home"}, {"title": "Two", "url": app + "/two"}]
        s = await start(c, app, platform, tabs=tabs)
        t = await tree(c, s)
        assert [x["name"] for x in t["tabs"]] == ["Home", "Two"]
        assert paths(t["tabs"][1]["stack"], app) == [("W", "/two")]
        assert t["active"] == "tab:Home"
        # The second tab starts when first selected: its web view opens on its URL, in front.
        picked = await c.request("router.selectTab", {"session": s, "tab": "Two"})
        assert picked["action"] == "selectTab" and picked["tab"] == "Two"
        opened = await c.next_event("webview.open", TIMEOUT, where=lambda p: p["session"] == s)
        w2 = opened["webview"]
        assert opened["url"] == app + "/two" and w2 == t["tabs"][1]["stack"][0]["id"]
        await loaded(c, s, w2, "pageLoaded")
        assert await evaluate(c, s, w2, "document.title") == "Two"
        await wait_until(c, s, w2, "document.visibilityState === 'visible'")
        # A visit in the selected tab stacks there; Home's stack stays as it was.
        await c.request("webview.click", {"session": s, "webview": w2, "selector": "#to-one"})
        await stack_changed(c, s, "push")
        await rendered(c, s, w2, "/one")
        t = await tree(c, s)
        assert paths(t["tabs"][1]["stack"], app) == [("P", "/two"), ("W", "/one")]
        assert paths(t["tabs"][0]["stack"], app) == [("W", "/")]
        # Home again: its web view comes back to the front with its page as it was.
        await c.request("router.perform", {"session": s, "action": {"type": "selectTab", "tab": "Home"}})
        await wait_until(c, s, "W1", "document.visibilityState === 'visible'")
        assert await evaluate(c, s, "W1", "document.title") == "Home"
        got = await c.request("session.get", {"session": s})
        assert [i["id"] for i in got["stack"]] == ["W1"]
        # Back at Home's root does nothing (it does not switch tabs); in Two it pops.
        assert (await c.request("navigation.back", {"session": s}))["action"] == "none"
        await c.request("router.selectTab", {"session": s, "tab": "Two"})
        back = await c.request("navigation.back", {"session": s})
        assert back["action"] == "pop"
        await rendered(c, s, w2, "/two")
        assert paths((await tree(c, s))["tabs"][1]["stack"], app) == [("W", "/two")]
        # An unknown tab is refused and changes nothing.
        refused = await c.call("router.selectTab", {"session": s, "tab": "Cart"})
        assert refused["error"]["code"] == "invalid-params" and "Home, Two" in refused["error"]["message"]
        assert (await tree(c, s))["active"] == "tab:Two"
        await c.close()

    run(go())
