"""Hotwire Native sessions (docs/HOTWIRE.md): an unmodified Turbo app (Tests/integration/hotwire_app,
Turbo 7.1.0 from PyPI) in a `hotwire-native` browser session, on both platforms, driven only
over the controller protocol: advance, back, replace, a modal form whose redirect dismisses the
modal, a native screen, a GET redirect, a bridge component, a failed visit, another host."""
import pytest

from bridgeclient import controller
from browser_sessions_support import TIMEOUT, evaluate, run, wait_until
from hotwire_support import (PLATFORMS, app_fixture, form_connect_and_reply, hotwire_app, loaded, paths, rendered, settled,  # noqa: F401
                             stack_changed, start, tree)

app = app_fixture()


@pytest.mark.parametrize("platform", PLATFORMS)
def test_what_the_page_sees(daemon, app, platform):
    async def go():
        c = await controller(daemon.ws_url)
        s = await start(c, app, platform)
        ua = await evaluate(c, s, "W1", "navigator.userAgent")
        if platform == "ios":
            assert ua.endswith(" Hotwire Native iOS; Turbo Native iOS; bridge-components: [form]"), ua
            assert await evaluate(c, s, "W1", "typeof window.webkit.messageHandlers.turbo.postMessage") == "function"
            assert await evaluate(c, s, "W1", "typeof window.TurboSession") == "undefined"
        else:
            assert ua.startswith("Hotwire Native Android; Turbo Native Android; bridge-components: [form]; Mozilla/"), ua
            assert await evaluate(c, s, "W1", "typeof window.TurboSession.visitProposedToLocation") == "function"
            assert await evaluate(c, s, "W1", "typeof window.webkit") == "undefined"
        assert "Astro" not in ua
        assert await evaluate(c, s, "W1", "typeof turboNative.visitLocationWithOptionsAndRestorationIdentifier") == "function"
        assert await evaluate(c, s, "W1", "Turbo.session.adapter === window.turboNative") is True
        assert await evaluate(c, s, "W1", "nativeBridge.platform") == platform
        ready = [p for p in c.events("hotwire.message") if p["session"] == s]
        assert [p["name"] for p in ready][:2] == ["turboIsReady", "pageLoaded"]
        assert ready[1]["data"]["restorationIdentifier"]
        got = await c.request("session.get", {"session": s})
        assert got["profile"] == "hotwire-native" and got["platform"] == platform
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_advance_back_replace(daemon, app, platform):
    async def go():
        c = await controller(daemon.ws_url)
        s = await start(c, app, platform)
        root_rid = (await tree(c, s))["tabs"][0]["stack"][0].get("restorationIdentifier")
        # advance: a proposal, native pushes a screen, the visit happens in the same tab
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-one"})
        proposed = await loaded(c, s, "W1", "visitProposed")
        assert proposed["data"]["location"] == app + "/one" and proposed["data"]["options"]["action"] == "advance"
        changed = await stack_changed(c, s, "push")
        assert changed["cause"] == "hotwire:default:push"
        await rendered(c, s, "W1", "/one")
        t = await tree(c, s)
        assert paths(t["tabs"][0]["stack"], app) == [("P", "/"), ("W", "/one")]
        assert t["tabs"][0]["stack"][0]["restorationIdentifier"] == root_rid
        assert await evaluate(c, s, "W1", "document.title") == "One"
        # native back: a pop, then a restore visit in the same tab
        back = await c.request("navigation.back", {"session": s})
        assert back["action"] == "pop"
        started = await settled(c, s, "W1", "/")
        assert paths((await tree(c, s))["tabs"][0]["stack"], app) == [("W", "/")]
        assert await evaluate(c, s, "W1", "[location.href, document.title]") == [app + "/", "Home"]
        assert started["data"]["hasCachedSnapshot"] is True, "the restore visit shows Turbo's snapshot first"
        # replace: the depth stays
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-one"})
        await rendered(c, s, "W1", "/one")
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-two-replace"})
        changed = await stack_changed(c, s, "replace")
        await rendered(c, s, "W1", "/two")
        assert paths((await tree(c, s))["tabs"][0]["stack"], app) == [("P", "/"), ("W", "/two")]
        assert await evaluate(c, s, "W1", "document.title") == "Two"
        # back at the root does nothing
        await c.request("navigation.back", {"session": s})
        await rendered(c, s, "W1", "/")
        none = await c.request("navigation.back", {"session": s})
        assert none["action"] == "none"
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_modal_form_redirect_dismisses_and_shows_the_result(daemon, app, platform):
    async def go():
        c = await controller(daemon.ws_url)
        s = await start(c, app, platform)
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-new"})
        opened = await c.next_event("webview.open", TIMEOUT, where=lambda p: p["session"] == s)
        modal = opened["webview"]
        await c.next_event("page.connected", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == modal)
        t = await tree(c, s)
        assert t["active"] == "modal" and paths(t["modal"], app) == [("W", "/items/new")]
        assert paths(t["tabs"][0]["stack"], app) == [("W", "/")]
        await loaded(c, s, modal, "pageLoaded")
        await evaluate(c, s, modal, "document.getElementById('item-title').value = ''; 1")
        await c.request("webview.type", {"session": s, "webview": modal, "selector": "#item-title", "text": "Bread and butter"})
        await c.request("webview.click", {"session": s, "webview": modal, "selector": "#submit"})
        await c.next_event("webview.closed", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == modal)
        await rendered(c, s, "W1", "/items/1")
        t = await tree(c, s)
        assert t["modal"] is None and t["active"] == "tab:main"
        assert paths(t["tabs"][0]["stack"], app) == [("P", "/"), ("W", "/items/1?title=Bread+and+butter")]
        assert await evaluate(c, s, "W1", "document.getElementById('item').textContent") == "Bread and butter"
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_modal_web_view_between_presentations(daemon, app, platform):
    """iOS's modal Session keeps its one web view between presentations: the second modal is a
    new web view (webview.open, then webview.closed at its dismissal, as the first) shown by the
    first one's tab, whose document and script state stay; its page visits the screen. Android
    makes a new tab for each presentation."""
    async def go():
        c = await controller(daemon.ws_url)
        s = await start(c, app, platform)

        async def present():
            await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-new"})
            opened = await c.next_event("webview.open", TIMEOUT, where=lambda p: p["session"] == s)
            modal = opened["webview"]
            await c.next_event("page.connected", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == modal)
            return modal

        first = await present()
        await loaded(c, s, first, "pageLoaded")
        await evaluate(c, s, first, "window.__presentedBefore = location.pathname; document.getElementById('item-title').value = 'stale'; 1")
        back = await c.request("navigation.back", {"session": s})
        assert back["action"] == "pop" and back["removed"] == [first]
        await c.next_event("webview.closed", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == first)
        assert (await tree(c, s))["modal"] is None

        second = await present()
        assert second != first
        if platform == "ios":
            # The kept page visits the screen (no cold boot): the old document is still there.
            await rendered(c, s, second, "/items/new")
            assert await evaluate(c, s, second, "window.__presentedBefore ?? null") == "/items/new"
        else:
            await loaded(c, s, second, "pageLoaded")
            assert await evaluate(c, s, second, "window.__presentedBefore ?? null") is None
        t = await tree(c, s)
        assert t["active"] == "modal" and [i["id"] for i in t["modal"]] == [second]
        assert paths(t["modal"], app) == [("W", "/items/new")]
        assert await evaluate(c, s, second, "location.pathname") == "/items/new"
        # The form of the second presentation works as the first's: its redirect dismisses it.
        await evaluate(c, s, second, "document.getElementById('item-title').value = ''; 1")
        await c.request("webview.type", {"session": s, "webview": second, "selector": "#item-title", "text": "Tea"})
        await c.request("webview.click", {"session": s, "webview": second, "selector": "#submit"})
        await c.next_event("webview.closed", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == second)
        await rendered(c, s, "W1", "/items/1")
        t = await tree(c, s)
        assert t["modal"] is None and paths(t["tabs"][0]["stack"], app) == [("P", "/"), ("W", "/items/1?title=Tea")]
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_native_screen_and_get_redirect(daemon, app, platform):
    async def go():
        c = await controller(daemon.ws_url)
        s = await start(c, app, platform)
        await evaluate(c, s, "W1", "window.restores = 0; document.addEventListener('native:restore', () => window.restores++); 1")
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-numbers"})
        await stack_changed(c, s, "push")
        t = await tree(c, s)
        top = t["tabs"][0]["stack"][-1]
        assert top["kind"] == "native" and top["screen"] == ("numbers" if platform == "ios" else "hotwire://fragment/numbers")
        assert await evaluate(c, s, "W1", "location.href") == app + "/", "a native screen is no visit"
        await c.request("navigation.back", {"session": s})
        assert paths((await tree(c, s))["tabs"][0]["stack"], app) == [("W", "/")]
        # Back to the page the web view still shows: Android restores its current visit (the
        # page's `native:restore`, on which bridge 1.x components connect again); iOS visits it
        # with `restore`.
        if platform == "android":
            await wait_until(c, s, "W1", "window.restores === 1")
        else:
            await settled(c, s, "W1", "/")

        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-one"})
        await rendered(c, s, "W1", "/one")
        # (the daemon's events reach the page in order: a restore would have come before this visit)
        assert await evaluate(c, s, "W1", "window.restores") == (1 if platform == "android" else 0)
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-follow"})
        # Turbo follows the redirect, then proposes the final URL with `replace` (redirected)
        proposal = await c.next_event("hotwire.message", TIMEOUT, where=lambda p: p["session"] == s and p["name"] == "visitProposed" and p["data"]["location"].endswith("/redirected"))
        assert proposal["data"]["options"]["action"] == "replace" and proposal["data"]["options"]["response"]["redirected"] is True
        await stack_changed(c, s, "replace")
        await wait_until(c, s, "W1", "location.pathname === '/redirected' && document.title === 'Redirected'")
        stack = paths((await tree(c, s))["tabs"][0]["stack"], app)
        # one screen for the redirect, with the final URL. iOS pops the screen the redirect
        # came from first, and the proposal's `replace` then takes the place of the one below
        # (hotwire-native-ios's Navigator); Android does not read `redirected`.
        if platform == "ios":
            assert stack == [("P", "/"), ("W", "/redirected")]
        else:
            assert stack == [("P", "/"), ("P", "/one"), ("W", "/redirected")]
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_bridge_component_and_reply(daemon, app, platform):
    async def go():
        c = await controller(daemon.ws_url)
        s = await start(c, app, platform)
        await form_connect_and_reply(c, s, app)
        assert await evaluate(c, s, "W1", "document.documentElement.dataset.bridgeComponents") == "form"
        # A message whose url is not the web view's is what native would drop: reported as ignored.
        await evaluate(c, s, "W1", "nativeBridge.receive({id: '9', component: 'form', event: 'connect', data: {metadata: {url: 'http://elsewhere.invalid/'}}}); 1")
        ignored = await c.next_event("bridge.message", TIMEOUT, where=lambda p: p["session"] == s and p["id"] == "9")
        assert ignored["ignored"] is True
        assert await c.error("bridge.reply", {"session": s, "webview": "W9", "id": "1", "component": "form", "event": "connect"}) == "unknown-webview"
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_failed_visit_and_another_host(daemon, app, platform):
    async def go():
        c = await controller(daemon.ws_url)
        s = await start(c, app, platform)
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-missing"})
        failed = await loaded(c, s, "W1", "visitRequestFailed")
        assert failed["data"]["statusCode"] == 404
        t = await tree(c, s)
        assert t["tabs"][0]["stack"][-1]["error"] == {"statusCode": 404}
        await c.request("navigation.back", {"session": s})
        # The page is back to "/" but Turbo never rendered /missing: the restore is a replace
        # visit, the cached snapshot first, the response later. A click once it has rendered
        # (the first visitRendered) clicks, also when the response replaces the link meanwhile.
        await rendered(c, s, "W1", "/")
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-external"})
        opened = await c.next_event("external.open", TIMEOUT, where=lambda p: p["session"] == s)
        assert opened["url"] == "http://external.invalid/"
        assert paths((await tree(c, s))["tabs"][0]["stack"], app) == [("W", "/")]
        # A link Turbo does not take (data-turbo=false) is stopped by the browser and proposed natively.
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-other-document"})
        await stack_changed(c, s, "push")
        await wait_until(c, s, "W1", "location.pathname === '/plain'")
        await c.close()

    run(go())


def test_profile_errors(daemon, app):
    async def go():
        c = await controller(daemon.ws_url)
        for params in (
            {"profile": "other"},
            {"profile": "hotwire-native", "platform": "web"},
            {"profile": "hotwire-native", "pathConfiguration": {"rules": [{"patterns": ["("]}]}},
            {"profile": "hotwire-native", "bridgeComponents": ["a b"]},
            {"platform": "ios"},
        ):
            code = await c.error("session.create", {"url": app + "/", "browser": True, **params})
            assert code == "invalid-params", params
        assert await c.error("session.create", {"url": app + "/", "profile": "hotwire-native"}) == "invalid-params"
        assert (await c.request("session.list"))["sessions"] == []
        await c.close()

    run(go())


def test_path_configuration_url(daemon, app):
    async def go():
        c = await controller(daemon.ws_url)
        result = await c.request("session.create", {
            "url": app + "/", "browser": True, "profile": "hotwire-native",
            "pathConfigurationUrl": app + "/path-configuration.json"}, timeout=60)
        s = result["session"]
        # The page's first load and the fetch of its path configuration race: either comes first.
        await loaded(c, s, "W1", "pageLoaded")
        got = next((p for p in c.events("hotwire.pathConfiguration") if p["session"] == s), None) \
            or await c.next_event("hotwire.pathConfiguration", TIMEOUT, where=lambda p: p["session"] == s)
        assert got["rules"] == len(hotwire_app.PATH_CONFIGURATION["rules"])
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-new"})
        opened = await c.next_event("webview.open", TIMEOUT, where=lambda p: p["session"] == s)
        assert (await tree(c, s))["active"] == "modal", opened
        await c.close()

    run(go())
