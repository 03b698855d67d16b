"""Capacitor sessions through the real daemon (docs/CAPACITOR.md): the test app
(Tests/integration/capacitor_app, the stand-ins of @capacitor/core 3 and 8 bundled by the app
itself) in a `capacitor` browser session, on Android and iOS, driven only over the controller
protocol: the platform, App.getInfo from the session's options, a preference read back after a
reload, a mocked Device.getInfo, Network's networkStatusChange from capacitor.emit, a deep link,
the hardware back (Android) and its refusal (iOS), the in-app browser, a plugin outside the
session's list, App.exitApp. What the app saw is read from its DOM, awaited in the page (a
MutationObserver), never polled."""
import json
import pathlib

import pytest

from bridgeclient import controller
from browser_sessions_support import TIMEOUT, evaluate, run, serve_directory

APP_DIR = pathlib.Path(__file__).resolve().parent / "capacitor_app"
PLUGINS = ["App", "Preferences", "Storage", "Device", "Network", "Browser", "Keyboard"]
RUNTIMES = [("index.html", 8), ("v3.html", 3)]
PLATFORMS = ["android", "ios"]


@pytest.fixture(scope="module")
def app_url():
    yield from serve_directory(APP_DIR)


def until_in_page(condition: str) -> str:
    """An expression that resolves once `condition` holds in the page: checked again at every
    change of the document (the app writes what it saw into its DOM)."""
    return f"""new Promise((resolve) => {{
      const check = () => {{ try {{ return !!({condition}); }} catch (e) {{ return false; }} }};
      if (check()) return resolve(true);
      const o = new MutationObserver(() => {{ if (check()) {{ o.disconnect(); resolve(true); }} }});
      o.observe(document, {{ subtree: true, childList: true, attributes: true, characterData: true }});
    }})"""


async def wait_in_page(c, s, condition, webview="W1"):
    assert await evaluate(c, s, webview, until_in_page(condition)) is True


def logged(line: str) -> str:
    return f"(window.__appLog || []).includes({json.dumps(line)})"


READY = "document.documentElement.dataset.ready === 'true'"


async def start(c, app_url, page, platform, **capacitor):
    options = {"appId": "com.example.demo", "appName": "Demo", "version": "1.2.3", "build": "7",
               "plugins": PLUGINS, "launchUrl": "myapp://item/7", **capacitor}
    result = await c.request("session.create", {"url": f"{app_url}/{page}", "browser": True, "profile": "capacitor",
                                                "platform": platform, "capacitor": options}, timeout=60)
    assert result["profile"] == "capacitor"
    s = result["session"]
    await c.next_event("page.connected", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == "W1")
    await wait_in_page(c, s, READY)
    return s


async def dataset(c, s):
    return await evaluate(c, s, "W1", "({...document.documentElement.dataset})")


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("page,core", RUNTIMES)
def test_the_app_runs_native(daemon, app_url, page, core, platform):
    async def go():
        c = await controller(daemon.ws_url)
        s = await start(c, app_url, page, platform)
        d = await dataset(c, s)
        assert d["core"] == str(core) and d["platform"] == platform and d["native"] == "true"
        assert d["available"].split(",") == PLUGINS
        assert json.loads(d["appInfo"]) == {"name": "Demo", "id": "com.example.demo", "build": "7", "version": "1.2.3"}
        assert d["launchUrl"] == "myapp://item/7"
        assert d["prefBefore"] == "null" and d["prefAfter"] == "1"
        # A plugin outside the session's list: not implemented, reported as unavailable.
        assert json.loads(d["unlisted"]) == {"code": "UNIMPLEMENTED", "message": f'"Geolocation" plugin is not implemented on {platform}'}
        calls = [p for p in c.events("capacitor.call") if p["session"] == s]
        assert any(p["plugin"] == "Geolocation" and p.get("unavailable") is True for p in calls)
        info = [p for p in c.events("capacitor.result") if p["session"] == s and p["plugin"] == "App" and p["method"] == "getInfo"]
        assert info and info[0]["success"] is True and info[0]["data"]["name"] == "Demo"

        # A mock reaches the app; the preference is read back after a reload (native kept it).
        await c.request("capacitor.mock", {"session": s, "plugin": "Device", "method": "getInfo",
                                           "result": {"model": "Mocked", "platform": platform}})
        await c.request("webview.reload", {"session": s, "webview": "W1"})
        await c.next_event("page.connected", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == "W1")
        await wait_in_page(c, s, READY + " && document.documentElement.dataset.prefBefore === '1'")
        d = await dataset(c, s)
        assert json.loads(d["device"]) == {"model": "Mocked", "platform": platform}
        assert d["prefAfter"] == "2"
        mocked = [p for p in c.events("capacitor.result") if p["session"] == s and p["plugin"] == "Device"]
        assert mocked[-1].get("mocked") is True

        # capacitor.emit reaches the app's listener.
        status = {"connected": False, "connectionType": "none"}
        emitted = await c.request("capacitor.emit", {"session": s, "plugin": "Network", "event": "networkStatusChange", "data": status})
        assert emitted["listeners"] == 1
        await wait_in_page(c, s, logged("Network.networkStatusChange " + json.dumps(status, separators=(",", ":"))))

        # A deep link reaches appUrlOpen (after the cold start's launch URL, kept for the first listener).
        await c.request("navigation.openUrl", {"session": s, "url": "myapp://item/8"})
        await wait_in_page(c, s, logged('App.appUrlOpen {"url":"myapp://item/8"}'))
        await c.close()

    run(go())


@pytest.mark.parametrize("page,core", RUNTIMES)
def test_back_on_android_reaches_the_listener(daemon, app_url, page, core):
    async def go():
        c = await controller(daemon.ws_url)
        s = await start(c, app_url, page, "android")
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#inner"})
        await wait_in_page(c, s, "location.pathname === '/inner'")
        back = await c.request("navigation.back", {"session": s})
        assert back["action"] == "backButton"
        # The app's listener heard canGoBack and went back itself; the document's backbutton too.
        await wait_in_page(c, s, logged('App.backButton {"canGoBack":true}') + " && " + logged("document.backbutton"))
        await wait_in_page(c, s, "location.pathname === '/" + page + "'")
        # At the first entry the listener hears canGoBack: false.
        back = await c.request("navigation.back", {"session": s})
        assert back["action"] == "backButton"
        await wait_in_page(c, s, logged('App.backButton {"canGoBack":false}'))
        await c.close()

    run(go())


@pytest.mark.parametrize("page,core", RUNTIMES)
def test_ios_has_no_back_button(daemon, app_url, page, core):
    async def go():
        c = await controller(daemon.ws_url)
        s = await start(c, app_url, page, "ios")
        reply = await c.call("navigation.back", {"session": s})
        assert reply["error"]["code"] == "not-allowed" and "back button" in reply["error"]["message"]
        assert not await evaluate(c, s, "W1", logged("document.backbutton"))
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_in_app_browser_and_exit(daemon, app_url, platform):
    async def go():
        c = await controller(daemon.ws_url)
        s = await start(c, app_url, "index.html", platform)
        # Browser.open: a new item with its own tab, which has no Capacitor; browserPageLoaded.
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#open-browser"})
        await c.next_event("page.connected", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == "W2")
        await wait_in_page(c, s, logged("Browser.open.resolved") + " && " + logged("Browser.browserPageLoaded null"))
        got = await c.request("session.get", {"session": s})
        assert [item["id"] for item in got["stack"]] == ["W1", "W2"]
        assert got["stack"][1]["url"] == app_url + "/browser-page.html"
        assert await evaluate(c, s, "W2", "[document.title, typeof window.Capacitor]") == ["In-app browser page", "undefined"]
        # The back closes it: the item goes, browserFinished.
        back = await c.request("navigation.back", {"session": s})
        assert back["action"] == "closeBrowser" and back["removed"] == ["W2"]
        assert [item["id"] for item in back["stack"]] == ["W1"]
        await wait_in_page(c, s, logged("Browser.browserFinished null"))
        # App.exitApp ends the session on Android; iOS has none (not implemented).
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#exit"})
        if platform == "ios":
            await wait_in_page(c, s, logged('App.exitApp.rejected {"code":"UNIMPLEMENTED","message":"not implemented"}'))
            await c.close()
            return
        closed = await c.next_event("session.closed", TIMEOUT, where=lambda p: p["session"] == s)
        assert closed["reason"] == "exit-app"
        assert (await c.call("session.get", {"session": s}))["error"]["code"] == "unknown-session"
        await c.close()

    run(go())


@pytest.mark.parametrize("platform,origin", [("android", "https://localhost"), ("ios", "https://localhost")])
def test_open_serves_the_web_dir_at_the_apps_origin(daemon_factory, platform, origin):
    """`bridged open URL --profile capacitor --web-dir DIR`: the app's files at the origin it has
    on the device, through the browser's request interception; a client route is index.html."""
    d = daemon_factory("open", f"{origin}/index.html", "--port", "0", "--profile", "capacitor", "--platform", platform,
                       "--web-dir", str(APP_DIR))

    async def go():
        c = await controller(d.ws_url)
        # The session was opened before this controller came (it hears every session's events:
        # what happens after the list is heard).
        sessions = (await c.request("session.list"))["sessions"]
        if not sessions:
            await c.next_event("session.created", TIMEOUT)
            sessions = (await c.request("session.list"))["sessions"]
        s = sessions[0]["session"]
        if not sessions[0]["stack"][0].get("connected"):
            await c.next_event("page.connected", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == "W1")
        await wait_in_page(c, s, READY)
        d_ = await dataset(c, s)
        assert d_["platform"] == platform and d_["native"] == "true" and d_["core"] == "8"
        assert await evaluate(c, s, "W1", "location.origin") == origin
        assert await evaluate(c, s, "W1", "Capacitor.convertFileSrc('/data/a.jpg')") == origin + "/_capacitor_file_/data/a.jpg"
        # A client route: index.html, in the same web view.
        await c.request("navigation.navigateToUrl", {"session": s, "url": origin + "/deep/route"})
        await wait_in_page(c, s, "location.pathname === '/deep/route' && " + READY)
        assert await evaluate(c, s, "W1", "document.getElementById('title').textContent") == "Capacitor test app"
        got = await c.request("session.get", {"session": s})
        assert [item["id"] for item in got["stack"]] == ["W1"]
        # A file that is not there is a 404, not the app.
        status = await evaluate(c, s, "W1", "fetch('/missing.js').then((r) => r.status)")
        assert status == 404
        await c.close()

    run(go())


def test_check_judges_a_capacitor_app_by_its_own_rules(app_url):
    """`bridged check --profile capacitor`: the profile's rules (the Astro ones are not judged: a
    one-web-view app pushes history itself); a start page that cannot load is exit 2."""
    import subprocess
    from conftest import bridged_bin

    def check(*args):
        p = subprocess.run([bridged_bin(), "check", *args], capture_output=True, text=True, timeout=180)
        return p.returncode, p.stdout, p.stderr

    code, out, err = check(f"{app_url}/index.html", "--profile", "capacitor", "--platform", "android", "--max-states", "4")
    # The test app has buttons, no links: the explorer taps them (its inner route is a state),
    # and no rule is broken (test_check_capacitor.py has the profile's own).
    assert code == 0, out + err
    assert "/inner" in out and "push-without-navigate" not in out and "page-error" not in out, out
    code, out, err = check("http://127.0.0.1:9/index.html", "--profile", "capacitor")
    assert code == 2 and "unreachable" in err, out + err
