"""Issue 21's bar with the libraries a Hotwire Native app ships today: an app the project never
saw (hotwire8_app: Turbo 8, Stimulus 3 and @hotwired/hotwire-native-bridge loaded as its own ES
modules through an import map, a `form` BridgeComponent of its own) runs in a `hotwire-native`
session on both platforms: advance pushes, native back pops and the page shows the earlier URL,
replace keeps the depth, `context: modal` presents a modal whose form redirect dismisses it and
shows the result on the main stack, `view_controller` pushes a native screen, a GET redirect
leaves one screen with the final URL, the `form` component's `connect` reaches the controller
with the page's URL and the reply reaches the page; `bridged check --profile hotwire-native`
passes on it. Each bridge version in the vendor directory runs the bridge flows.

SKIPPED unless Tests/integration/hotwire8_app/vendor/ is populated (no package registry CI
reaches ships Turbo 8 or the bridge; docs/HOTWIRE.md). The directory is git-ignored: third-party
code stays out of the repository. To populate it (layout in hotwire8_app/server.py), from
GitHub or npm:

    V=Tests/integration/hotwire8_app/vendor; mkdir -p $V/bridge-1.0.0/helpers
    # Turbo 8: turbo-rails' built ES module (its first lines say "Turbo 8.0.x")
    curl -o $V/turbo.js https://raw.githubusercontent.com/hotwired/turbo-rails/v2.0.21/app/assets/javascripts/turbo.js
    #   (or npm pack @hotwired/turbo@8 and copy package/dist/turbo.es2017-esm.js to $V/turbo.js)
    # Stimulus 3
    curl -o $V/stimulus.js https://raw.githubusercontent.com/hotwired/stimulus-rails/main/app/assets/javascripts/stimulus.js
    # the bridge, one directory a version: its src/ (index.js, bridge.js, bridge_component.js,
    # bridge_element.js, helpers/user_agent.js) and package.json, e.g. at the tag v1.0.0
    git clone -b v1.0.0 https://github.com/hotwired/hotwire-native-bridge /tmp/hnb
    cp -r /tmp/hnb/src/* /tmp/hnb/package.json $V/bridge-1.0.0/
    #   (or npm pack @hotwired/hotwire-native-bridge@1.2.2: package/dist/hotwire-native-bridge.js
    #    as $V/bridge-1.2.2/index.js, package/package.json beside it)

then `python3 -m pytest -q Tests/integration/test_hotwire8.py` (with a release build of bridged).
"""
import importlib.util
import json
import os

import pytest

from bridgeclient import controller
from browser_sessions_support import TIMEOUT, evaluate, run, until, wait_until
from conftest import start_daemon
from hotwire_support import PLATFORMS, app_fixture, form_connect_and_reply, loaded, paths, rendered, settled, stack_changed, start, tree
from test_check import check, needs_chromium

_spec = importlib.util.spec_from_file_location(
    "hotwire8_server", os.path.join(os.path.dirname(os.path.abspath(__file__)), "hotwire8_app", "server.py"))
hotwire8 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hotwire8)

MISSING = hotwire8.missing()
pytestmark = [pytest.mark.skipif(MISSING is not None, reason=f"no Turbo 8 / bridge: {MISSING} "
                                 "(populate it by hand: see this module's docstring)"), needs_chromium]
BRIDGES = hotwire8.bridge_versions() or ["none"]
FIRST_BRIDGE = BRIDGES[0]


def serve(bridge):
    return lambda: hotwire8.start(bridge)


@pytest.fixture(scope="module")
def shared_daemon():
    d = start_daemon()
    yield d
    d.stop_if_running()


@pytest.fixture(scope="module", params=BRIDGES)
def app(request):
    """The app with each bridge version of vendor/ (the Turbo flows take the first only)."""
    server, base = hotwire8.start(request.param)
    yield base
    server.shutdown()
    server.server_close()


turbo_app = app_fixture("module", serve(FIRST_BRIDGE), name="turbo_app")


def test_the_versions_under_test():
    """What runs here, said in the test log (-rA or -v): the Turbo and bridge versions."""
    assert hotwire8.turbo_version().startswith("8.")
    print(f"Turbo {hotwire8.turbo_version()}; bridge " +
          ", ".join(f"{b} ({hotwire8.bridge_package_version(b)})" for b in BRIDGES))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_turbo8_is_the_pages_own_and_the_adapter_registered(shared_daemon, turbo_app, platform):
    async def go():
        c = await controller(shared_daemon.ws_url)
        s = await start(c, turbo_app, platform)
        # Turbo came as a module of the page's import map: the adapter registered with it.
        assert await evaluate(c, s, "W1", "Turbo.session.adapter === window.turboNative") is True
        assert await evaluate(c, s, "W1", "!!document.querySelector('script[type=importmap]')") is True
        names = [p["name"] for p in c.events("hotwire.message") if p["session"] == s]
        assert names[:2] == ["turboIsReady", "pageLoaded"], names
        # Turbo 8 prefetches links on hover unless the adapter says no (native: never).
        assert await evaluate(c, s, "W1", "(() => { const a = document.getElementById('to-one');"
                              " return Turbo.session.canPrefetchRequestToLocation(a, new URL(a.href)) })()") is False
        # turboNative.cacheSnapshot reaches Turbo 8's snapshot cache (its view.cacheSnapshot takes the snapshot).
        assert await evaluate(c, s, "W1", "Turbo.session.view.snapshotCache.has(new URL(location.href))") is False
        await evaluate(c, s, "W1", "turboNative.cacheSnapshot(); 1")
        await wait_until(c, s, "W1", "Turbo.session.view.snapshotCache.has(new URL(location.href))")
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_advance_back_replace(shared_daemon, turbo_app, platform):
    app = turbo_app

    async def go():
        c = await controller(shared_daemon.ws_url)
        s = await start(c, app, platform)
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-one"})
        proposed = await loaded(c, s, "W1", "visitProposed")
        assert proposed["data"]["location"] == app + "/one" and proposed["data"]["options"]["action"] == "advance"
        assert (await stack_changed(c, s, "push"))["cause"] == "hotwire:default:push"
        await rendered(c, s, "W1", "/one")
        assert paths((await tree(c, s))["tabs"][0]["stack"], app) == [("P", "/"), ("W", "/one")]
        assert await evaluate(c, s, "W1", "[location.href, document.title]") == [app + "/one", "One"]
        # native back pops; the restore visit shows the earlier URL
        back = await c.request("navigation.back", {"session": s})
        assert back["action"] == "pop"
        started = await settled(c, s, "W1", "/")
        assert started["data"]["hasCachedSnapshot"] is True
        assert paths((await tree(c, s))["tabs"][0]["stack"], app) == [("W", "/")]
        await wait_until(c, s, "W1", f"location.href === {json.dumps(app + '/')} && document.title === 'Home'")
        # replace keeps the depth
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-one"})
        await rendered(c, s, "W1", "/one")
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-two-replace"})
        await stack_changed(c, s, "replace")
        await rendered(c, s, "W1", "/two")
        assert paths((await tree(c, s))["tabs"][0]["stack"], app) == [("P", "/"), ("W", "/two")]
        await wait_until(c, s, "W1", "location.pathname === '/two' && document.title === 'Two'")
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_page_refresh_morphs_in_place(shared_daemon, turbo_app, platform):
    """Turbo 8's page refresh (a form redirecting to the page it is on, with
    turbo-refresh-method morph): the adapter makes it without asking native; the stack stays."""
    app = turbo_app

    async def go():
        c = await controller(shared_daemon.ws_url)
        s = await start(c, app, platform, path="/counter")
        before = paths((await tree(c, s))["tabs"][0]["stack"], app)
        assert before == [("W", "/counter")]
        count = int(await evaluate(c, s, "W1", "document.getElementById('count').textContent"))
        await evaluate(c, s, "W1", "window.samePage = true; 1")
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#add-one"})
        refreshing = await loaded(c, s, "W1", "visitProposalRefreshingPage")
        assert refreshing["data"]["location"] == app + "/counter"
        started = await loaded(c, s, "W1", "visitStarted")
        assert started["data"]["isPageRefresh"] is True, started
        await wait_until(c, s, "W1", f"document.getElementById('count').textContent === '{count + 1}'")
        # morphed in place: the same document
        assert await evaluate(c, s, "W1", "[window.samePage, location.pathname]") == [True, "/counter"]
        assert paths((await tree(c, s))["tabs"][0]["stack"], app) == before
        assert not [p for p in c.events("hotwire.message") if p["session"] == s and p["name"] == "visitProposed"]
        assert not [p for p in c.events("stack.changed") if p["session"] == s and p["cause"].startswith("hotwire:")]
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_native_screen_and_get_redirect(shared_daemon, turbo_app, platform):
    app = turbo_app

    async def go():
        c = await controller(shared_daemon.ws_url)
        s = await start(c, app, platform)
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-numbers"})
        await stack_changed(c, s, "push")
        top = (await tree(c, s))["tabs"][0]["stack"][-1]
        assert top["kind"] == "native" and top["screen"] == ("numbers" if platform == "ios" else "hotwire://fragment/numbers")
        assert await evaluate(c, s, "W1", "location.href") == app + "/", "a native screen is no visit"
        await c.request("navigation.back", {"session": s})
        assert paths((await tree(c, s))["tabs"][0]["stack"], app) == [("W", "/")]
        if platform == "ios":
            await settled(c, s, "W1", "/")  # iOS visits the uncovered web screen with `restore`
        # a GET redirect: Turbo 8 follows it, then proposes the final URL with `replace`
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-one"})
        await rendered(c, s, "W1", "/one")
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-follow"})
        proposal = await c.next_event("hotwire.message", TIMEOUT, where=lambda p: p["session"] == s and p["name"] == "visitProposed"
                                      and p["data"]["location"].endswith("/redirected"))
        assert proposal["data"]["options"]["action"] == "replace" and proposal["data"]["options"]["response"]["redirected"] is True
        await stack_changed(c, s, "replace")
        await wait_until(c, s, "W1", "location.pathname === '/redirected' && document.title === 'Redirected'")
        stack = paths((await tree(c, s))["tabs"][0]["stack"], app)
        assert [p for k, p in stack].count("/redirected") == 1 and stack[-1] == ("W", "/redirected"), stack
        assert "/follow" not in [p for k, p in stack], stack
        # (iOS pops the screen the redirect came from; Android does not read `redirected`)
        assert stack == ([("P", "/"), ("W", "/redirected")] if platform == "ios"
                         else [("P", "/"), ("P", "/one"), ("W", "/redirected")]), stack
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_bridge_form_connect_and_reply(shared_daemon, app, platform):
    async def go():
        c = await controller(shared_daemon.ws_url)
        s = await start(c, app, platform)
        await form_connect_and_reply(c, s, app)
        assert await evaluate(c, s, "W1", "[document.documentElement.dataset.bridgePlatform, document.documentElement.dataset.bridgeComponents]") == [platform, "form"]
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_back_from_a_native_screen_reconnects_the_components(shared_daemon, app, platform, request):
    """Back from a native screen to the web screen the web view never left: iOS visits it with
    `restore` (Turbo renders its snapshot: the components connect again); hotwire-native-android
    restores the current visit, `native:restore`, on which a bridge newer than 1.0.0 runs
    `connect()` again (1.0.0 does not listen)."""
    bridge = request.node.callspec.params["app"]
    again = platform == "ios" or hotwire8.bridge_listens_for_restore(bridge)

    async def go():
        c = await controller(shared_daemon.ws_url)
        s = await start(c, app, platform)

        def connects():
            return [p for p in c.events("bridge.message") if p["session"] == s]
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-bridge"})
        await settled(c, s, "W1", "/bridge")  # (its restoration identifier is stored: Android needs it)

        async def connected():
            return connects()
        first = (await until(connected, "the form component's connect"))[0]
        await evaluate(c, s, "W1", "window.restores = 0; document.addEventListener('native:restore', () => window.restores++); 1")
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-numbers"})
        await stack_changed(c, s, "push")
        await c.request("navigation.back", {"session": s})
        if platform == "ios":
            await settled(c, s, "W1", "/bridge")  # the restore visit
        else:
            await wait_until(c, s, "W1", "window.restores === 1")
        if again:
            async def reconnected():
                return [p for p in connects() if p["id"] != first["id"]]
            second = (await until(reconnected, "the component's connect again"))[0]
            assert (second["event"], second["data"]["metadata"]["url"]) == ("connect", app + "/bridge") and "ignored" not in second
            await c.request("bridge.reply", {"session": s, "webview": "W1", "id": second["id"], "component": "form",
                                             "event": "connect", "data": {"again": True}})
            await wait_until(c, s, "W1", "document.getElementById('reply').textContent === '{\"again\":true}'")
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-one"})
        await rendered(c, s, "W1", "/one")
        # (iOS's restore visit may render Turbo's snapshot twice: a connect each)
        assert (len(connects()) >= 2) if again else (len(connects()) == 1), connects()
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_modal_form_connects_and_its_redirect_dismisses_the_modal(shared_daemon, app, platform):
    async def go():
        c = await controller(shared_daemon.ws_url)
        s = await start(c, app, platform)
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-new"})
        modal = (await c.next_event("webview.open", TIMEOUT, where=lambda p: p["session"] == s))["webview"]
        t = await tree(c, s)
        assert t["active"] == "modal" and paths(t["modal"], app) == [("W", "/items/new")]
        assert paths(t["tabs"][0]["stack"], app) == [("W", "/")]
        # the modal's form component connects from the modal's web view, with its URL
        message = await c.next_event("bridge.message", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == modal)
        assert (message["component"], message["event"], message["data"]["submitTitle"]) == ("form", "connect", "Save")
        assert message["data"]["metadata"]["url"] == app + "/items/new" and "ignored" not in message, message
        await loaded(c, s, modal, "pageLoaded")
        await evaluate(c, s, modal, "document.getElementById('item-title').value = 'Bread and butter'; 1")
        await c.request("webview.click", {"session": s, "webview": modal, "selector": "#submit"})
        started = await loaded(c, s, modal, "formSubmissionStarted")
        finished = await loaded(c, s, modal, "formSubmissionFinished")
        assert started["data"]["location"] == finished["data"]["location"] == app + "/items", started
        await c.next_event("webview.closed", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == modal)
        await rendered(c, s, "W1", "/items/1")
        t = await tree(c, s)
        assert t["modal"] is None and t["active"] == "tab:main"
        assert paths(t["tabs"][0]["stack"], app) == [("P", "/"), ("W", "/items/1?title=Bread+and+butter")]
        await wait_until(c, s, "W1", "document.getElementById('item') && document.getElementById('item').textContent === 'Bread and butter'")
        await c.close()

    run(go())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_bridged_check_passes(turbo_app, platform, tmp_path):
    config = tmp_path / "path-configuration.json"
    config.write_text(json.dumps(hotwire8.PATH_CONFIGURATION))
    code, out, err = check(turbo_app + "/", "--profile", "hotwire-native", "--platform", platform,
                           "--path-configuration", str(config), "--bridge-components", "form")
    assert code == 0, out + err
    assert "BROKEN" not in out, out
    states = {l.split()[1] for l in out.splitlines() if l.startswith("  ") and l.strip()[0].isdigit()}
    assert {"/", "/one", "/items/new", "/numbers", "/bridge"} <= states, out
