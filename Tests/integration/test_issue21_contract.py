"""Issue 21 (Hotwire Native profile) read word for word: each interface the issue names, checked
against the built product where test_hotwire.py / test_check_hotwire.py do not already check it
(the default platform, two bridge components in the user agent, both channels of both
platforms, `turboNative`'s three methods, `nativeBridge`'s `register`/`replyWith` and its ready
handshake, the exact fields of `hotwire.message`/`bridge.message`, `bridge.reply` answering
`{}`, `router.get`'s `main`/`modal` trees, `session.get`'s `stack` being the active context's,
`navigation.navigateToUrl`, `session.screenshot` and `placeholder.snapshot` on these sessions,
and `bridged open --profile hotwire-native` with every option). One daemon and one app for the
module; each test makes its own session."""
import asyncio
import base64
import json
import socket
import urllib.parse

import pytest

from bridgeclient import controller
from browser_sessions_support import TIMEOUT, evaluate, run, until, wait_until
from conftest import start_daemon

import hotwire_support
from hotwire_support import PLATFORMS, app_fixture, hotwire_app, paths, rendered
from hotwire_support import loaded as message

COMPONENTS = ["form", "menu"]
app = app_fixture("module")


@pytest.fixture(scope="module")
def shared_daemon():
    d = start_daemon()
    yield d
    d.stop_if_running()


async def start(c, base, platform=None, path="/", **extra):
    return await hotwire_support.start(c, base, platform, path, components=COMPONENTS, **extra)


async def close_session(c, s):
    await c.request("session.close", {"session": s})


def test_platform_defaults_to_ios_and_the_user_agent_names_every_component(shared_daemon, app):
    async def go():
        c = await controller(shared_daemon.ws_url)
        s = await start(c, app)  # no `platform`
        got = await c.request("session.get", {"session": s})
        assert got["profile"] == "hotwire-native" and got["platform"] == "ios"
        ua = await evaluate(c, s, "W1", "navigator.userAgent")
        assert ua.endswith(" Hotwire Native iOS; Turbo Native iOS; bridge-components: [form menu]"), ua
        await close_session(c, s)
        s = await start(c, app, "android")
        ua = await evaluate(c, s, "W1", "navigator.userAgent")
        assert ua.startswith("Hotwire Native Android; Turbo Native Android; bridge-components: [form menu]; Mozilla/"), ua
        await close_session(c, s)
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_channels_turbo_native_and_native_bridge(shared_daemon, app, platform):
    async def go():
        c = await controller(shared_daemon.ws_url)
        s = await start(c, app, platform)
        if platform == "ios":
            assert await evaluate(c, s, "W1", "typeof window.webkit.messageHandlers.turbo.postMessage") == "function"
            assert await evaluate(c, s, "W1", "typeof window.webkit.messageHandlers.bridge.postMessage") == "function"
            assert await evaluate(c, s, "W1", "typeof window.BridgeComponentsNative") == "undefined"
        else:
            assert await evaluate(c, s, "W1", "typeof window.TurboSession") == "object"
            assert await evaluate(c, s, "W1", "typeof window.BridgeComponentsNative.bridgeDidReceiveMessage") == "function"
            assert await evaluate(c, s, "W1", "typeof window.BridgeComponentsNative.bridgeDidInitialize") == "function"
            assert await evaluate(c, s, "W1", "typeof window.webkit") == "undefined"
        for method in ("visitLocationWithOptionsAndRestorationIdentifier", "cacheSnapshot", "clearSnapshotCache"):
            assert await evaluate(c, s, "W1", f"typeof window.turboNative.{method}") == "function", method
        for method in ("register", "replyWith"):
            assert await evaluate(c, s, "W1", f"typeof window.nativeBridge.{method}") == "function", method
        # The ready handshake: the page's nativeBridge announced itself and native registered
        # the session's components in answer.
        await wait_until(c, s, "W1", "JSON.stringify(window.nativeBridge.supportedComponents) === '[\"form\",\"menu\"]'")
        assert await evaluate(c, s, "W1", "nativeBridge.supportsComponent('menu') && !nativeBridge.supportsComponent('other')") is True
        # cacheSnapshot / clearSnapshotCache reach Turbo's snapshot cache.
        await evaluate(c, s, "W1", "turboNative.cacheSnapshot(); 1")
        await wait_until(c, s, "W1", "Turbo.session.view.snapshotCache.has(new URL(location.href))")
        await evaluate(c, s, "W1", "turboNative.clearSnapshotCache(); 1")
        assert await evaluate(c, s, "W1", "Turbo.session.view.snapshotCache.has(new URL(location.href))") is False
        await close_session(c, s)
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_event_fields_and_bridge_reply_answers_empty(shared_daemon, app, platform):
    async def go():
        c = await controller(shared_daemon.ws_url)
        s = await start(c, app, platform)
        loaded = [p for p in c.events("hotwire.message") if p["session"] == s]
        for p in loaded:
            assert set(p) == {"session", "webview", "name", "data"}, p
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-bridge"})
        m = await c.next_event("bridge.message", TIMEOUT, where=lambda p: p["session"] == s)
        assert set(m) == {"session", "webview", "id", "component", "event", "data"}, m
        assert m["data"]["metadata"]["url"] == app + "/bridge"
        reply = await c.request("bridge.reply", {"session": s, "webview": m["webview"], "id": m["id"],
                                                 "component": m["component"], "event": m["event"], "data": {"ok": 1}})
        assert reply == {}
        await wait_until(c, s, "W1", "document.getElementById('reply').textContent === '{\"ok\":1}'")
        # The page's web library saw both registered components.
        assert await evaluate(c, s, "W1", "document.documentElement.dataset.bridgeComponents") == "form menu"
        ignored = None
        await evaluate(c, s, "W1", "nativeBridge.receive({id: '77', component: 'form', event: 'connect', data: {metadata: {url: 'http://other.invalid/'}}}); 1")
        ignored = await c.next_event("bridge.message", TIMEOUT, where=lambda p: p["session"] == s and p["id"] == "77")
        assert ignored["ignored"] is True and ignored["data"]["metadata"]["url"] == "http://other.invalid/"
        await close_session(c, s)
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_main_and_modal_trees_and_the_active_contexts_stack(shared_daemon, app, platform):
    async def go():
        c = await controller(shared_daemon.ws_url)
        s = await start(c, app, platform)
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-one"})
        await rendered(c, s, "W1", "/one")
        tree = (await c.request("session.get", {"session": s}))["tree"]
        assert [t["name"] for t in tree["tabs"]] == ["main"]
        assert tree["modal"] is None and tree["active"] == "tab:main"
        main = tree["tabs"][0]["stack"]
        assert paths(main, app) == [("P", "/"), ("W", "/one")]
        assert main[0]["restorationIdentifier"] and main[0]["url"] == app + "/"
        assert main[1]["id"] == "W1"
        # A modal: router.get shows it as `modal`, and session.get's `stack` is the modal's.
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-new"})
        opened = await c.next_event("webview.open", TIMEOUT, where=lambda p: p["session"] == s)
        modal = opened["webview"]
        await message(c, s, modal, "pageLoaded")
        tree = (await c.request("session.get", {"session": s}))["tree"]
        assert tree["active"] == "modal" and paths(tree["modal"], app) == [("W", "/items/new")]
        assert paths(tree["tabs"][0]["stack"], app) == [("P", "/"), ("W", "/one")]
        got = await c.request("session.get", {"session": s})
        assert [i["id"] for i in got["stack"]] == [modal]
        assert got["tree"] == tree
        # back dismisses the modal: the main stack is the session's stack again
        back = await c.request("navigation.back", {"session": s})
        assert back["action"] == "pop" and back["removed"] == [modal]
        got = await c.request("session.get", {"session": s})
        assert [i["id"] for i in got["stack"]][-1] == "W1" and len(got["stack"]) == 2
        await close_session(c, s)
        await c.close()

    run(go())


def test_router_get_shows_the_main_and_modal_trees(shared_daemon, app):
    async def go():
        c = await controller(shared_daemon.ws_url)
        s = await start(c, app, "ios")
        try:
            got = await c.request("router.get", {"session": s})
            assert [t["name"] for t in got["tree"]["tabs"]] == ["main"] and got["tree"]["modal"] is None
            assert got["tree"] == (await c.request("session.get", {"session": s}))["tree"]
            assert [i["id"] for i in got["stack"]] == ["W1"]
        finally:
            await close_session(c, s)
            await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_navigate_to_url_and_screenshot(shared_daemon, app, platform):
    async def go():
        c = await controller(shared_daemon.ws_url)
        s = await start(c, app, platform)
        await c.request("navigation.navigateToUrl", {"session": s, "url": app + "/one"})
        changed = await c.next_event("stack.changed", TIMEOUT, where=lambda p: p["session"] == s and p["cause"].startswith("hotwire:"))
        assert "push" in changed["cause"], changed
        await rendered(c, s, "W1", "/one")
        assert await evaluate(c, s, "W1", "[location.pathname, document.title]") == ["/one", "One"]
        tree = (await c.request("session.get", {"session": s}))["tree"]
        assert paths(tree["tabs"][0]["stack"], app) == [("P", "/"), ("W", "/one")]
        shot = await c.request("session.screenshot", {"session": s})
        assert shot["mimeType"] == "image/jpeg"
        assert base64.b64decode(shot["data"])[:3] == b"\xff\xd8\xff"
        # a native route of that URL: /numbers is a native screen (the path configuration's)
        await c.request("navigation.navigateToUrl", {"session": s, "url": app + "/numbers"})
        await c.next_event("stack.changed", TIMEOUT, where=lambda p: p["session"] == s and p["stack"] and p["stack"][-1]["kind"] == "native")
        top = (await c.request("session.get", {"session": s}))["tree"]["tabs"][0]["stack"][-1]
        assert top["kind"] == "native" and top["screen"] == ("numbers" if platform == "ios" else "hotwire://fragment/numbers")
        await close_session(c, s)
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_placeholder_snapshot(shared_daemon, app, platform):
    async def go():
        c = await controller(shared_daemon.ws_url)
        s = await start(c, app, platform)
        try:
            await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-one"})
            await rendered(c, s, "W1", "/one")
            placeholder = (await c.request("session.get", {"session": s}))["tree"]["tabs"][0]["stack"][0]
            assert placeholder["kind"] == "placeholder"
            snap = await c.request("placeholder.snapshot", {"session": s, "placeholder": placeholder["id"]})
            assert snap["mimeType"] == "image/jpeg" and base64.b64decode(snap["data"])[:3] == b"\xff\xd8\xff"
        finally:
            await close_session(c, s)
            await c.close()

    run(go())


@pytest.mark.parametrize("source", ["file", "url"])
def test_bridged_open_with_every_hotwire_option(app, tmp_path, source):
    config = tmp_path / "path-configuration.json"
    config.write_text(json.dumps(hotwire_app.PATH_CONFIGURATION))
    where = str(config) if source == "file" else app + "/path-configuration.json"
    d = start_daemon("open", app + "/", "--profile", "hotwire-native", "--platform", "android",
                     "--path-configuration", where, "--bridge-components", "form menu", "--port", "0")
    try:
        async def go():
            c = await controller(d.ws_url)

            async def one():
                sessions = (await c.request("session.list"))["sessions"]
                return sessions if sessions and sessions[0]["stack"][0].get("connected") else None
            s = (await until(one, "the opened session's page"))[0]["session"]
            got = await c.request("session.get", {"session": s})
            assert got["profile"] == "hotwire-native" and got["platform"] == "android"
            await wait_until(c, s, "W1", "typeof window.turboNative === 'object'")
            ua = await evaluate(c, s, "W1", "navigator.userAgent")
            assert ua.startswith("Hotwire Native Android; Turbo Native Android; bridge-components: [form menu]; "), ua
            # The path configuration applies: /items/new is a modal.
            await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-new"})
            await c.next_event("webview.open", TIMEOUT, where=lambda p: p["session"] == s)
            assert (await c.request("session.get", {"session": s}))["tree"]["active"] == "modal"
            await c.close()

        run(go())
    finally:
        d.stop_if_running()


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_adapter_messages_of_a_visit_a_form_and_an_error(shared_daemon, app, platform):
    """The messages the issue lists, with the notes' fields, in Turbo's order."""
    async def go():
        c = await controller(shared_daemon.ws_url)
        s = await start(c, app, platform)

        def of(webview):
            return [p for p in c.events("hotwire.message") if p["session"] == s and p["webview"] == webview]
        first = of("W1")
        assert [p["name"] for p in first][:2] == ["turboIsReady", "pageLoaded"]
        assert first[0]["data"]["isReady"] is True and first[1]["data"]["restorationIdentifier"]
        before = len(of("W1"))
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-one"})
        started = await rendered(c, s, "W1", "/one")
        ident = started["data"]["identifier"]

        async def completed():
            return next((p for p in of("W1") if p["name"] == "visitCompleted" and p["data"]["identifier"] == ident), None)
        # (iOS posts visitCompleted at once and visitRendered after two frames: either may be first.)
        done = await until(completed, "visitCompleted")
        assert done["data"]["restorationIdentifier"]
        visit = [p for p in of("W1")[before:] if p["name"] == "visitProposed" or p["data"].get("identifier") == started["data"]["identifier"]]
        names = [p["name"] for p in visit]
        # (Turbo reports the request finished before it has read the body, so Finished may come
        # before Completed: Turbo's order, kept.)
        assert names[:3] == ["visitProposed", "visitStarted", "visitRequestStarted"], names
        assert sorted(names[3:5]) == ["visitRequestCompleted", "visitRequestFinished"], names
        assert sorted(names[5:]) == ["visitCompleted", "visitRendered"], names
        assert visit[0]["data"]["location"] == app + "/one" and visit[0]["data"]["options"]["action"] == "advance"
        assert set(visit[1]["data"]) >= {"identifier", "hasCachedSnapshot", "isPageRefresh"}
        # A window error: errorRaised on iOS only.
        await evaluate(c, s, "W1", "setTimeout(() => { throw new Error('audit boom') }); 1")
        if platform == "ios":
            raised = await message(c, s, "W1", "errorRaised")
            assert "audit boom" in raised["data"]["error"], raised
        # A Turbo form in the modal: formSubmissionStarted/Finished with its location.
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-new"})
        modal = (await c.next_event("webview.open", TIMEOUT, where=lambda p: p["session"] == s))["webview"]
        await message(c, s, modal, "pageLoaded")
        await c.request("webview.click", {"session": s, "webview": modal, "selector": "#submit"})
        form_started = await message(c, s, modal, "formSubmissionStarted")
        form_finished = await message(c, s, modal, "formSubmissionFinished")
        assert form_started["data"]["location"].startswith(app + "/items")
        assert form_finished["data"]["location"] == form_started["data"]["location"]
        await c.next_event("webview.closed", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == modal)
        if platform == "android":
            assert not [p for p in c.events("hotwire.message") if p["session"] == s and p["name"] == "errorRaised"]
        await close_session(c, s)
        await c.close()

    run(go())


@pytest.mark.parametrize("args, says", [
    (["--platform", "android"], "--platform needs"),
    (["--bridge-components", "form"], "--bridge-components needs"),
    (["--profile", "bogus"], "bogus"),
    (["--profile", "hotwire-native", "--platform", "web"], '"ios" or "android"'),
    (["--profile", "hotwire-native", "--path-configuration", "/nonexistent/path-configuration.json"], "cannot be read"),
    (["--profile", "hotwire-native", "--path-configuration", "http://"], "--path-configuration http://: not an http(s) URL"),
    (["--profile", "hotwire-native", "--bridge-components", "a a!"], "--bridge-components: bridge component \"a!\" is not a name"),
    (["--path-configuration", "x.json"], "--path-configuration needs --profile hotwire-native"),
])
def test_bridged_open_refuses_bad_hotwire_options(args, says):
    from conftest import run_daemon_expect_exit
    code, out, err = run_daemon_expect_exit("open", "http://127.0.0.1:1/", "--port", "0", *args)
    assert code != 0 and not out.startswith("listening"), (code, out, err)
    assert says in err, err


@pytest.mark.parametrize("start_path, config, says", [
    # With the session's cookies, as the app's page has them (set by its start page).
    ("/?sign-in=1", "/path-configuration-signed-in.json", None),
    ("/", "/path-configuration-signed-in.json", "HTTP 403"),
    ("/", "/nope.json", "HTTP 404"),
    ("/", "/one", "not JSON: "),
    ("/", "closed-port", "net::ERR_CONNECTION_REFUSED"),
])
def test_the_daemons_fetch_of_the_path_configuration(shared_daemon, app, start_path, config, says):
    async def go():
        c = await controller(shared_daemon.ws_url)
        if config == "closed-port":  # a port nothing listens on (not one Chromium calls unsafe)
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
            url = f"http://127.0.0.1:{port}/path-configuration.json"
        else:
            url = app + config
        result = await c.request("session.create", {
            "url": app + start_path, "browser": True, "profile": "hotwire-native", "pathConfigurationUrl": url}, timeout=60)
        s = result["session"]
        try:
            got = await c.next_event("hotwire.pathConfiguration", TIMEOUT, where=lambda p: p["session"] == s)
            assert got["url"] == url and got["webview"] == "W1", got
            if says is None:
                assert got.get("rules") == len(hotwire_app.PATH_CONFIGURATION["rules"]), got
            else:
                assert "rules" not in got and got["error"].startswith(says), got
        finally:
            await close_session(c, s)
            await c.close()

    run(go())


@pytest.mark.parametrize("path", ["/path-configuration.json", "/path-configuration-moved"])
def test_path_configuration_url_of_another_origin_is_fetched_by_the_daemon(shared_daemon, app, path):
    other, other_base = hotwire_app.start()  # the same app on another port: another origin, no CORS headers
    try:
        async def go():
            c = await controller(shared_daemon.ws_url)
            url = other_base + path  # the document, or a 301 to it
            result = await c.request("session.create", {
                "url": app + "/", "browser": True, "profile": "hotwire-native",
                "pathConfigurationUrl": url}, timeout=60)
            s = result["session"]
            try:
                got = await c.next_event("hotwire.pathConfiguration", TIMEOUT, where=lambda p: p["session"] == s)
                assert got == {"session": s, "webview": "W1", "url": url,
                               "rules": len(hotwire_app.PATH_CONFIGURATION["rules"])}, got
                # A page cannot set it: its own hotwire.pathConfiguration is refused and reaches no
                # controller (the app event sent after it arrives with no such event before it).
                forged = {"url": url, "document": {"rules": [{"patterns": [".*"], "properties": {"context": "modal"}}]}}
                await c.request("webview.evaluate", {"session": s, "webview": "W1", "expression":
                    "(() => { const b = window.__bridgedInjected.bridge;"
                    f" b.trigger('hotwire.pathConfiguration', {json.dumps(forged)});"
                    " b.trigger('after-forgery', {}); return true; })()"})
                await c.next_event("app.event", TIMEOUT, where=lambda p: p["session"] == s and p["name"] == "after-forgery")
                assert [e for e in c.events("hotwire.pathConfiguration") if e["session"] == s] == [got]
            finally:
                await close_session(c, s)
                await c.close()

        run(go())
    finally:
        other.shutdown()
        other.server_close()
