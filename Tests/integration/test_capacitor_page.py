"""The page side of `capacitor` sessions (docs/CAPACITOR.md) in real headless Chromium, without
the daemon: js-client/capacitor/capacitor.js injected at document start (as the daemon injects
it, after a stand-in of inject.js's page bridge), the test app (Tests/integration/capacitor_app)
on its core-8 and core-3 stand-in runtimes, on Android and iOS. A small native side in Python
answers the page events of the wire (capacitor.call → capacitor.result) and sends listener
events and DOM events (capacitor.trigger), as the daemon will.

The page bridge's `trigger` is a DevTools binding (Runtime.addBinding), so every page event
arrives as a CDP event and is answered at once; nothing polls.
"""
from __future__ import annotations

import asyncio
import json
import time

import pytest

from browser_sessions_support import serve_directory
from browser_support import REPO, WAIT_S, Browser, CDPError, find_chromium

APP_DIR = REPO / "Tests" / "integration" / "capacitor_app"
CAPACITOR_JS = (REPO / "js-client" / "capacitor" / "capacitor.js").read_text()
CHROMIUM = find_chromium()

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (or $CHROMIUM)")

# What inject.js leaves on window, reduced to the two calls capacitor.js uses.
PAGE_BRIDGE = """
(() => {
  if (window.top !== window || !/^https?:/.test(location.href)) return;
  const handlers = {};
  Object.defineProperty(window, "__bridgedInjected", { value: Object.freeze({ bridge: {
    trigger(name, params) { window.__bridgedNative(JSON.stringify({ name, params })); return true; },
    on(name, fn) { handlers[name] = fn; return () => {}; },
  } }) });
  Object.defineProperty(window, "__bridgedDeliver", { value: (name, params) => handlers[name] && handlers[name](params) });
})();
"""

BASE = [{"name": "addListener"}, {"name": "removeListener"}, {"name": "removeAllListeners", "rtype": "promise"},
        {"name": "checkPermissions", "rtype": "promise"}, {"name": "requestPermissions", "rtype": "promise"}]


def header(name, *methods):
    return {"name": name, "methods": BASE + [{"name": m, "rtype": "promise"} for m in methods]}


# The session's plugins (Geolocation and Camera left out: the app finds them not implemented).
PLUGINS = [
    header("App", "exitApp", "getInfo", "getState", "getLaunchUrl", "minimizeApp"),
    header("Preferences", "get", "set", "remove", "clear", "keys"),
    header("Storage", "get", "set", "remove", "clear", "keys"),
    header("Device", "getId", "getInfo"),
    header("Network", "getStatus"),
    header("Browser", "open", "close"),
    header("Keyboard", "show", "hide"),
]


def injected(platform: str) -> str:
    config = {"platform": platform, "plugins": PLUGINS, "config": {}, "serverUrl": "https://localhost", "debug": False}
    return PAGE_BRIDGE + CAPACITOR_JS.replace("/*@CAPACITOR_CONFIG@*/ null", json.dumps(config))


@pytest.fixture(scope="module")
def app_url():
    yield from serve_directory(APP_DIR)


class Native:
    """The native side of one tab: answers calls, keeps listeners and preferences."""

    def __init__(self, tab, platform: str):
        self.tab = tab
        self.platform = platform
        self.seen = tab.mark()
        self.calls: list[dict] = []
        self.readies: list[dict] = []
        self.listeners: list[dict] = []
        self.prefs: dict[str, str] = {}

    async def deliver(self, name: str, params: dict) -> None:
        await self.tab.eval(f"window.__bridgedDeliver({json.dumps(name)}, {json.dumps(params)}); 1")

    async def result(self, call: dict, **fields) -> None:
        await self.deliver("capacitor.result", {"callbackId": call["callbackId"], "plugin": call["plugin"],
                                                "method": call["method"], "save": call["save"], **fields})

    async def handle(self, name: str, p: dict) -> None:
        if name == "capacitor.ready":
            self.readies.append(p)
            self.listeners.clear()
            return
        assert name == "capacitor.call", name
        self.calls.append(p)
        if p["callbackId"] in (None, "-1"):
            return
        plugin, method, options = p["plugin"], p["method"], p["options"]
        if method == "addListener":
            self.listeners.append(p)
            return
        if method == "removeListener":
            return
        answers = {
            ("App", "getInfo"): lambda: {"name": "Demo", "id": "com.example.demo", "build": "7", "version": "1.2.3"},
            ("App", "getLaunchUrl"): lambda: {"url": "myapp://item/7"},
            ("Device", "getInfo"): lambda: {"model": "Mocked", "platform": self.platform},
            ("Network", "getStatus"): lambda: {"connected": True, "connectionType": "wifi"},
        }
        if (plugin, method) in answers:
            await self.result(p, success=True, data=answers[(plugin, method)]())
        elif plugin in ("Preferences", "Storage") and method == "get":
            await self.result(p, success=True, data={"value": self.prefs.get(options["key"])})
        elif plugin in ("Preferences", "Storage") and method == "set":
            self.prefs[options["key"]] = options["value"]
            await self.result(p, success=True)
        else:
            await self.result(p, success=False, error={"message": "not in this test", "code": "UNAVAILABLE"})

    async def until(self, expression: str, timeout: float = WAIT_S):
        """Answers the page's events until `expression` is truthy in the page."""
        deadline = time.monotonic() + timeout
        browser = self.tab.browser
        while True:
            while self.seen < len(browser.events):
                message = browser.events[self.seen]
                self.seen += 1
                if message["method"] == "Runtime.bindingCalled" and message.get("sessionId") == self.tab.session:
                    event = json.loads(message["params"]["payload"])
                    await self.handle(event["name"], event["params"])
            try:
                value = await self.tab.eval(expression)
            except CDPError:
                value = None  # (a document coming or going)
            if value:
                return value
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"timed out waiting for {expression}")
            browser.wake.clear()
            if self.seen < len(browser.events):
                continue
            try:
                await asyncio.wait_for(browser.wake.wait(), min(remaining, 0.5))
            except asyncio.TimeoutError:
                pass

    def listener(self, plugin: str, event: str) -> dict:
        return next(p for p in self.listeners if p["plugin"] == plugin and p["options"]["eventName"] == event)


async def open_app(url: str, platform: str):
    browser = await Browser.launch(CHROMIUM)
    tab = await browser.new_tab()
    native = Native(tab, platform)
    await tab.send("Runtime.addBinding", {"name": "__bridgedNative"})
    await tab.send("Page.addScriptToEvaluateOnNewDocument", {"source": injected(platform)})
    await tab.send("Page.navigate", {"url": url})
    return browser, tab, native


READY = "!!document.documentElement && document.documentElement.dataset.ready === 'true'"


@pytest.mark.parametrize("platform", ["android", "ios"])
@pytest.mark.parametrize("page,core", [("index.html", 8), ("v3.html", 3)])
def test_the_app_runs_native(app_url, platform, page, core):
    async def go():
        browser, tab, native = await open_app(f"{app_url}/{page}", platform)
        try:
            await native.until(READY)
            d = await tab.eval("({...document.documentElement.dataset})")
            assert d["core"] == str(core) and d["platform"] == platform and d["native"] == "true"
            assert d["available"].split(",") == ["App", "Preferences", "Storage", "Device", "Network", "Browser", "Keyboard"]
            assert d["unavailablePlugins"] == "Geolocation,Camera"
            assert json.loads(d["appInfo"]) == {"name": "Demo", "id": "com.example.demo", "build": "7", "version": "1.2.3"}
            assert d["launchUrl"] == "myapp://item/7"
            assert json.loads(d["device"]) == {"model": "Mocked", "platform": platform}
            assert json.loads(d["unlisted"]) == {"code": "UNIMPLEMENTED", "message": f'"Geolocation" plugin is not implemented on {platform}'}
            assert (d["prefBefore"], d["prefAfter"]) == ("null", "1")
            assert native.readies == [{"platform": platform, "url": f"{app_url}/{page}"}]
            store = "Preferences" if core >= 4 else "Storage"
            assert [c["plugin"] for c in native.calls if c["method"] == "set"] == [store]
            unavailable = [c for c in native.calls if c.get("unavailable")]
            assert {(c["plugin"], c["method"]) for c in unavailable} == {("Geolocation", "getCurrentPosition")}
            assert all(c["callbackId"] is None for c in unavailable)

            # Listeners get the native side's events; DOM events come through Capacitor.triggerEvent.
            network = native.listener("Network", "networkStatusChange")
            assert network["save"] is True
            await native.deliver("capacitor.result", {"callbackId": network["callbackId"], "plugin": "Network", "method": "addListener",
                                                      "success": True, "data": {"connected": False, "connectionType": "none"}, "save": True})
            await native.until("""window.__appLog.includes('Network.networkStatusChange {"connected":false,"connectionType":"none"}')""")
            deep = native.listener("App", "appUrlOpen")
            await native.deliver("capacitor.result", {"callbackId": deep["callbackId"], "plugin": "App", "method": "addListener",
                                                      "success": True, "data": {"url": "myapp://item/8"}, "save": True})
            await native.until("""window.__appLog.includes('App.appUrlOpen {"url":"myapp://item/8"}')""")
            await native.deliver("capacitor.trigger", {"eventName": "backbutton", "target": "document", "data": {}})
            await native.until("window.__appLog.includes('document.backbutton')")
            await native.deliver("capacitor.trigger", {"eventName": "keyboardWillShow", "target": "window", "data": {"keyboardHeight": 300}})
            await native.until("""window.__appLog.includes('window.keyboardWillShow {"keyboardHeight":300}')""")
            # A document backbutton listener also registered an App backButton listener (Cordova compat).
            assert len([p for p in native.listeners if p["options"]["eventName"] == "backButton"]) == 2

            # A reload: a new document (capacitor.ready again), the preference read back from native.
            await tab.send("Page.reload")
            await native.until(READY + " && document.documentElement.dataset.prefBefore === '1'")
            assert await tab.eval("document.documentElement.dataset.prefAfter") == "2"
            assert len(native.readies) == 2

            if platform == "ios":
                # iOS's synchronous start-up prompts are answered in the page, no dialog.
                assert await tab.eval("prompt(JSON.stringify({type: 'CapacitorCookies.isEnabled'}))") == "false"
                assert await tab.eval("prompt(JSON.stringify({type: 'CapacitorHttp'}))") == "false"
                assert await tab.eval("typeof window.webkit.messageHandlers.bridge.postMessage") == "function"
                assert await tab.eval("typeof window.androidBridge") == "undefined"
            else:
                assert await tab.eval("typeof window.androidBridge.postMessage + typeof window.androidBridge.onmessage") == "functionfunction"
                assert await tab.eval("typeof window.webkit") == "undefined"
            assert await tab.eval("Capacitor.convertFileSrc('/data/a.jpg')") == "https://localhost/_capacitor_file_/data/a.jpg"
        finally:
            await browser.close()

    asyncio.run(asyncio.wait_for(go(), 120))
