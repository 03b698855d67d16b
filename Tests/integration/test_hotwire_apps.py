"""What a Hotwire app the project never saw relies on (docs/HOTWIRE.md): Turbo arriving late
(a module, an async script, a script added after the document completed), iOS's bridge only
with components registered, Android's touch reports for pull-to-refresh. Both platforms."""
import pytest

from bridgeclient import controller
from browser_sessions_support import TIMEOUT, evaluate, run, wait_until
from hotwire_support import PLATFORMS, app_fixture, hotwire_app, loaded, paths, rendered, stack_changed, tree  # noqa: F401

app = app_fixture()


async def create(c, base, platform, path="/", **extra):
    params = {"url": base + path, "browser": True, "profile": "hotwire-native", "platform": platform,
              "pathConfiguration": hotwire_app.PATH_CONFIGURATION}
    params.update(extra)
    return (await c.request("session.create", params, timeout=60))["session"]


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("load", ["module", "async", "after-load"])
def test_turbo_arriving_late(daemon, app, platform, load):  # noqa: F811
    async def go():
        c = await controller(daemon.ws_url)
        s = await create(c, app, platform, f"/late?load={load}")
        await loaded(c, s, "W1", "pageLoaded")
        assert await evaluate(c, s, "W1", "Turbo.session.adapter === window.turboNative") is True
        names = [p["name"] for p in c.events("hotwire.message") if p["session"] == s]
        assert names[:2] == ["turboIsReady", "pageLoaded"], names
        if load == "after-load":
            # Turbo started after the document completed sends no first turbo:load: the adapter
            # registered when window.Turbo was set, before the script's load event.
            assert await evaluate(c, s, "W1", "window.adapterAtTurboLoad") is True
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-next"})
        await stack_changed(c, s, "push")
        await rendered(c, s, "W1", "/late")
        assert paths((await tree(c, s))["tabs"][0]["stack"], app) == [("P", f"/late?load={load}"), ("W", f"/late?load={load}&step=2")]
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_bridge_only_with_components_on_ios(daemon, app, platform):  # noqa: F811
    async def go():
        c = await controller(daemon.ws_url)
        s = await create(c, app, platform, bridgeComponents=[])
        await loaded(c, s, "W1", "pageLoaded")
        ua = await evaluate(c, s, "W1", "navigator.userAgent")
        assert "bridge-components: []" in ua
        got = await evaluate(c, s, "W1", "[typeof window.nativeBridge, typeof (window.webkit && window.webkit.messageHandlers.bridge)]")
        if platform == "ios":
            # iOS's Bridge.initialize runs only with components: no handler, no nativeBridge.
            assert got == ["undefined", "undefined"]
            assert await evaluate(c, s, "W1", "typeof window.webkit.messageHandlers.turbo.postMessage") == "function"
        else:
            assert got == ["object", "undefined"]
        with_components = await create(c, app, platform, bridgeComponents=["form"])
        await loaded(c, with_components, "W1", "pageLoaded")
        assert await evaluate(c, with_components, "W1", "typeof window.nativeBridge") == "object"
        await c.close()

    run(go())


TOUCH = """(() => {
  const marked = document.createElement("div");
  marked.id = "marked";
  marked.setAttribute("data-native-prevent-pull-to-refresh", "");
  marked.innerHTML = "<span id='inside'>x</span>";
  const scroller = document.createElement("div");
  scroller.id = "scroller";
  scroller.style.cssText = "height:40px;overflow-y:auto";
  scroller.innerHTML = "<p id='row' style='height:400px'>rows</p>";
  document.body.append(marked, scroller);
  for (const id of ["inside", "row", "title"]) {
    document.getElementById(id).dispatchEvent(new Event("touchstart", {bubbles: true}));
    document.getElementById(id).dispatchEvent(new Event("touchend", {bubbles: true}));
  }
  return 1;
})()"""


def test_android_touch_reports_for_pull_to_refresh(daemon, app):  # noqa: F811
    async def go():
        c = await controller(daemon.ws_url)
        s = await create(c, app, "android", bridgeComponents=["form"])
        await loaded(c, s, "W1", "pageLoaded")
        await evaluate(c, s, "W1", TOUCH)
        got = []
        while len(got) < 6:
            p = await c.next_event("hotwire.message", TIMEOUT, where=lambda p: p["session"] == s and p["name"].startswith("elementTouch"))
            got.append((p["name"], p["data"].get("scrollable")))
        assert got == [("elementTouchStarted", True), ("elementTouchEnded", None),
                       ("elementTouchStarted", True), ("elementTouchEnded", None),
                       ("elementTouchStarted", False), ("elementTouchEnded", None)]
        await c.close()

    run(go())
