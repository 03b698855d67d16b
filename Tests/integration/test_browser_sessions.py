"""Browser sessions (docs/BROWSER.md): the daemon drives Chromium, a tab per web view, and pages
run unmodified. Real Chromium (the Debian package `chromium`), driven only over the controller
protocol."""
import asyncio
import base64
import os
import re
import signal
import socket
import time

import pytest

from bridgeclient import controller, ids
from browser_sessions_support import (  # noqa: F401 (site is a fixture)
    DEMO, TIMEOUT, DevTools, Pages, alive, create, descendants, evaluate, run, site, stack_is, until, wait_until,
    watched_chromium, watched_session,
)
from conftest import http_request

# Tests that list a context's tabs exactly run without the session's spare tab (one more
# `about:blank` page of the context; test_a_sessions_spare_tab_becomes_its_next_web_view_and_goes_with_it
# follows it).
NO_SPARE = ("--no-spare-tabs",)


def test_astro_page_walks_the_seed_scenario_unmodified(daemon_factory):
    d = daemon_factory("--static", DEMO)

    async def go():
        c = await controller(d.ws_url)
        s = await create(c, d.url + "/app/astro.html")
        await wait_until(c, s, "W1", "document.body.dataset.inApp === 'true' && document.body.dataset.renders === '1'")
        ua = await evaluate(c, s, "W1", "navigator.userAgent")
        assert ua.endswith(" Astro App/1.0"), ua
        assert await evaluate(c, s, "W1", "location.href") == d.url + "/app/astro.html", "no claim in the address bar"
        assert await evaluate(c, s, "W1", "[innerWidth, innerHeight]") == [390, 844]

        before = await c.request("session.screenshot", {"session": s})
        # A PWA navigation: the snapshot is taken before the reply, the overlay is up until pwa-rendered.
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#astro-deals"})
        await stack_is(c, s, "P1 W1")
        await c.next_event("foreground.removed", TIMEOUT, where=lambda p: p["session"] == s and p["reason"] == "rendered")
        await wait_until(c, s, "W1", "document.body.dataset.view === 'deals' && !document.getElementById('__bridged_foreground')")
        snap = await c.request("placeholder.snapshot", {"session": s, "placeholder": "P1"})
        assert snap["mimeType"] == "image/jpeg"
        jpeg = base64.b64decode(snap["data"])
        assert jpeg[:2] == b"\xff\xd8" and jpeg[-2:] == b"\xff\xd9"
        after = base64.b64decode((await c.request("session.screenshot", {"session": s}))["data"])
        assert jpeg != after, "the snapshot shows the state before the pwa-navigate"
        assert jpeg == base64.b64decode(before["data"]), "the snapshot is the screen as it was before the click"
        status, headers, body = http_request(d, f"/api/sessions/{s}/placeholders/P1.jpg")
        assert status == 200 and body == jpeg and headers["content-type"] == "image/jpeg"
        assert http_request(d, f"/api/sessions/{s}/placeholders/P9.jpg")[0] == 404
        # A name that is no placeholder id (a web view, another spelling) is no snapshot either.
        for name in ("W1", "P01", "p1", "P"):
            assert http_request(d, f"/api/sessions/{s}/placeholders/{name}.jpg")[0] == 404, name

        # A classic navigation (a location assignment): a new tab, the PWA's tab stays below.
        await evaluate(c, s, "W1", "location.href = '/app/classic.html'; 1")
        await stack_is(c, s, "P1 W1 W2")
        # classic.html imports /bridge.js itself: it finds the injected bridge.
        await wait_until(c, s, "W2", "document.body.dataset.ready === 'true'")
        assert await evaluate(c, s, "W2", "document.getElementById('webview').textContent") == "W2"
        get = await c.request("session.get", {"session": s})
        assert [i.get("connected") for i in get["stack"] if i["kind"] == "webview"] == [True, True]

        # Into the PWA again (W3), two PWA navigations there.
        await evaluate(c, s, "W2", "location.href = '/app/astro.html'; 1")
        await stack_is(c, s, "P1 W1 W2 W3")
        await c.next_event("page.connected", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == "W3")
        await wait_until(c, s, "W3", "document.body.dataset.renders === '1'")
        await c.request("webview.click", {"session": s, "webview": "W3", "selector": "#astro-deals"})
        await stack_is(c, s, "P1 W1 W2 P2 W3")
        await wait_until(c, s, "W3", "document.body.dataset.view === 'deals'")
        await c.request("webview.click", {"session": s, "webview": "W3", "selector": "#astro-help"})
        await stack_is(c, s, "P1 W1 W2 P2 P3 W3")
        await wait_until(c, s, "W3", "document.body.dataset.view === 'help'")

        # Six backs.
        for expected, view in [("P1 W1 W2 P2 W3", "deals"), ("P1 W1 W2 W3", "start")]:
            await c.request("navigation.back", {"session": s})
            await stack_is(c, s, expected)
            await wait_until(c, s, "W3", f"document.body.dataset.view === '{view}'")
        await c.request("navigation.back", {"session": s})
        await stack_is(c, s, "P1 W1 W2")
        assert await c.error("webview.evaluate", {"session": s, "webview": "W3", "expression": "1"}) == "unknown-webview"
        await c.request("navigation.back", {"session": s})
        await stack_is(c, s, "P1 W1")
        assert await evaluate(c, s, "W1", "document.body.dataset.view") == "deals", "the PWA's tab is as it was left"
        await c.request("navigation.back", {"session": s})
        await stack_is(c, s, "W1")
        await wait_until(c, s, "W1", "document.body.dataset.view === 'start'")
        r = await c.request("navigation.back", {"session": s})
        assert r["action"] == "none" and ids(r["stack"]) == "W1"
        await c.request("session.close", {"session": s})
        await c.close()

    run(go())


def test_navigations_are_stopped_natively_and_a_post_stays_a_post(daemon_factory, site):
    d = daemon_factory()

    async def go():
        c = await controller(d.ws_url)
        s = await create(c, site + "/form")
        await wait_until(c, s, "W1", "window.alive === 'yes'")
        # Fast back: what is typed in W1 survives the tabs stacked over it.
        await c.request("webview.type", {"session": s, "webview": "W1", "selector": "#q", "text": "typed"})

        # A POST form: a new web view, loaded as a POST with its body.
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#go"})
        await stack_is(c, s, "W1 W2")
        await wait_until(c, s, "W2", "!!document.getElementById('echo')")
        echo = await evaluate(c, s, "W2", "document.getElementById('echo').textContent")
        assert echo == "POST /echo application/x-www-form-urlencoded name=a+b%26c", echo
        await c.request("navigation.back", {"session": s})
        await stack_is(c, s, "W1")
        assert await evaluate(c, s, "W1", "document.getElementById('q').value") == "typed"

        # location.href = …
        await evaluate(c, s, "W1", f"location.href = '{site}/assigned'; 1")
        await stack_is(c, s, "W1 W3")
        await wait_until(c, s, "W3", "document.getElementById('echo')?.textContent === 'GET /assigned'")
        await c.request("navigation.back", {"session": s})
        await stack_is(c, s, "W1")

        # window.open: the popup never shows; its url becomes a web view.
        await evaluate(c, s, "W1", f"window.open('{site}/popup'); 1")
        await stack_is(c, s, "W1 W4")
        top = (await c.request("session.get", {"session": s}))["stack"][-1]
        assert top["url"] == site + "/popup"
        await c.request("navigation.back", {"session": s})
        await stack_is(c, s, "W1")

        # A custom scheme: stopped by the browser, handed to the navigation path.
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#tt"})
        await stack_is(c, s, "W1 W5")
        top = (await c.request("session.get", {"session": s}))["stack"][-1]
        assert top["url"] == "tt://settings"
        await c.request("navigation.back", {"session": s})
        await stack_is(c, s, "W1")

        # Same-document changes stay the page's own.
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#hash"})
        await evaluate(c, s, "W1", "history.pushState({}, '', '#pushed'); 1")
        await wait_until(c, s, "W1", "location.hash === '#pushed'")
        assert ids((await c.request("session.get", {"session": s}))["stack"]) == "W1"
        assert await evaluate(c, s, "W1", "window.alive + document.getElementById('q').value") == "yestyped"

        # Errors.
        assert await c.error("webview.evaluate", {"session": s, "webview": "W9", "expression": "1"}) == "unknown-webview"
        assert await c.error("webview.evaluate", {"session": s, "webview": "W1"}) == "invalid-params"
        assert await c.error("webview.click", {"session": s, "webview": "W1", "selector": "#nothing"}) == "browser-error"
        reply = await c.call("webview.evaluate", {"session": s, "webview": "W1", "expression": "throw new Error('boom')"})
        assert reply["error"]["code"] == "browser-error" and "boom" in reply["error"]["message"]
        plain = await c.request("session.create", {})
        assert await c.error("webview.evaluate", {"session": plain["session"], "webview": "W1", "expression": "1"}) == "invalid-params"
        await c.close()

    run(go())


def test_sessions_do_not_share_cookies(daemon_factory, site):
    d = daemon_factory()

    async def go():
        c = await controller(d.ws_url)
        a = await create(c, site + "/form")
        b = await create(c, site + "/form")
        await wait_until(c, a, "W1", "window.alive === 'yes'")
        await wait_until(c, b, "W1", "window.alive === 'yes'")
        await evaluate(c, a, "W1", "document.cookie = 'who=a; path=/'; 1")
        assert await evaluate(c, a, "W1", "document.cookie") == "who=a"
        assert await evaluate(c, b, "W1", "document.cookie") == ""
        await c.close()

    run(go())


def test_sigterm_leaves_no_chromium_behind(daemon_factory, site):
    d = daemon_factory()

    async def go():
        c = await controller(d.ws_url)
        s = await create(c, site + "/form")
        await evaluate(c, s, "W1", f"location.href = '{site}/two'; 1")
        await stack_is(c, s, "W1 W2")
        await c.close()

    run(go())
    chromium = descendants(d.proc.pid)
    assert chromium, "Chromium runs under the daemon"
    assert d.stop(signal.SIGTERM, timeout=30) == 0
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(p) for p in chromium):
        time.sleep(0.05)
    assert [p for p in chromium if alive(p)] == []


def user_data_dirs(pid):
    """The `--user-data-dir` of every Chromium below `pid`, from /proc/PID/cmdline."""
    dirs = set()
    for p in descendants(pid):
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        for a in argv:
            if a.startswith(b"--user-data-dir="):
                dirs.add(a.split(b"=", 1)[1].decode())
    return dirs


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_shutdown_removes_the_profile_directory(daemon_factory, site, sig):
    d = daemon_factory()

    async def go():
        c = await controller(d.ws_url)
        s = await create(c, site + "/form")
        await wait_until(c, s, "W1", "window.alive === 'yes'")
        await c.close()

    run(go())
    dirs = user_data_dirs(d.proc.pid)
    assert len(dirs) == 1, dirs
    profile = dirs.pop()
    assert os.path.isdir(profile) and os.path.basename(profile).startswith("bridged-chromium-")
    assert d.stop(sig, timeout=30) == 0
    assert not os.path.exists(profile), os.listdir(profile)


def test_a_profile_left_by_a_killed_daemon_is_removed_by_the_next(daemon_factory, site, tmp_path):
    env = {"TMPDIR": str(tmp_path)}
    d = daemon_factory(env=env)

    async def go(daemon):
        c = await controller(daemon.ws_url)
        s = await create(c, site + "/form")
        await wait_until(c, s, "W1", "window.alive === 'yes'")
        await c.close()

    run(go(d))
    (profile,) = user_data_dirs(d.proc.pid)
    assert os.path.dirname(profile) == str(tmp_path)
    chromium = descendants(d.proc.pid)
    # SIGKILL: the daemon cannot clean up; its Chromium dies with it, the profile stays.
    d.kill_if_running()
    deadline = time.monotonic() + TIMEOUT
    while any(alive(p) for p in chromium):
        assert time.monotonic() < deadline, "Chromium outlived its daemon"
        time.sleep(0.05)
    assert os.path.isdir(profile)
    socket_dir = os.path.dirname(os.readlink(os.path.join(profile, "SingletonSocket")))
    assert os.path.dirname(socket_dir) == str(tmp_path) and os.path.isdir(socket_dir)
    # A directory without Chromium's lock may belong to a daemon about to start one: kept.
    unlocked = tmp_path / "bridged-chromium-unlocked"
    unlocked.mkdir()

    d2 = daemon_factory(env=env)
    run(go(d2))
    assert not os.path.exists(profile) and not os.path.exists(socket_dir)
    assert unlocked.is_dir()
    (current,) = user_data_dirs(d2.proc.pid)
    assert os.path.isdir(current)
    assert d2.stop(signal.SIGTERM, timeout=30) == 0
    assert not os.path.exists(current)


def test_session_close_closes_its_tabs_and_no_other(daemon_factory, site, tmp_path):
    # Chromium also listens on a DevTools port of its own, so the test asks Chromium itself.
    d = daemon_factory("--chromium", watched_chromium(tmp_path), *NO_SPARE)

    async def go():
        c = await controller(d.ws_url)
        a = await create(c, site + "/holding?id=a1")
        chromium = await DevTools.of(d)
        (context_a,) = await chromium.contexts()
        await evaluate(c, a, "W1", f"location.href = '{site}/holding?id=a2'; 1")
        await stack_is(c, a, "W1 W2")
        b = await create(c, site + "/holding?id=b1")
        (context_b,) = await chromium.contexts() - {context_a}
        deadline = time.monotonic() + TIMEOUT
        while not {"a1", "a2", "b1"} <= Pages.held:
            assert time.monotonic() < deadline, Pages.held
            await asyncio.sleep(0.05)
        assert not Pages.released & {"a1", "a2", "b1"}
        assert await chromium.pages({context_a, context_b}) == sorted(
            [(context_a, site + "/holding?id=a1"), (context_a, site + "/holding?id=a2"), (context_b, site + "/holding?id=b1")])

        await c.request("session.close", {"session": a})
        # Both of a's tabs (the top one and the one below it) are gone: their connections end.
        deadline = time.monotonic() + TIMEOUT
        while not {"a1", "a2"} <= Pages.released:
            assert time.monotonic() < deadline, f"tabs of a closed session still live: {Pages.held - Pages.released}"
            await asyncio.sleep(0.05)
        assert await c.error("webview.evaluate", {"session": a, "webview": "W1", "expression": "1"}) != ""
        # Its browser context is disposed (Target.disposeBrowserContext): Chromium no longer has it.
        await until(lambda: _without(chromium, context_a), f"Chromium to dispose of {context_a}")
        assert await chromium.contexts() == {context_b}
        # The other session's tab and context are untouched.
        assert await chromium.pages({context_a, context_b}) == [(context_b, site + "/holding?id=b1")]
        assert await evaluate(c, b, "W1", "document.querySelector('p').textContent") == "b1"
        assert "b1" not in Pages.released
        await chromium.close()
        await c.close()

    run(go())


async def _without(chromium, context):
    return context not in await chromium.contexts()


async def _pages_are(chromium, context, expected):
    return await chromium.pages({context}) == expected


def test_a_meta_refresh_and_a_get_form_become_new_web_views(daemon_factory, site):
    d = daemon_factory()

    async def go():
        c = await controller(d.ws_url)
        s = await create(c, site + "/meta")
        await stack_is(c, s, "W1 W2")
        top = (await c.request("session.get", {"session": s}))["stack"][-1]
        assert top["url"] == site + "/refreshed"
        await wait_until(c, s, "W2", "document.getElementById('echo')?.textContent === 'GET /refreshed'")
        assert await evaluate(c, s, "W1", "document.title") == "meta", "W1 stays on the refreshing page"

        g = await create(c, site + "/getform")
        await wait_until(c, g, "W1", "window.alive === 'yes'")
        await c.request("webview.click", {"session": g, "webview": "W1", "selector": "#go"})
        await stack_is(c, g, "W1 W2")
        await wait_until(c, g, "W2", "document.getElementById('echo')?.textContent === 'GET /search?q=x+y'")
        assert await evaluate(c, g, "W1", "window.alive") == "yes", "the form's page was never left"
        await c.close()

    run(go())


def test_a_pages_own_history_back_is_a_back_of_the_host(daemon_factory, site, tmp_path):
    d = daemon_factory("--chromium", watched_chromium(tmp_path), *NO_SPARE)

    async def go():
        c, s, chromium, context = await watched_session(d, site + "/form", "window.alive === 'yes'")
        await evaluate(c, s, "W1", f"location.href = '{site}/second'; 1")
        await stack_is(c, s, "W1 W2")
        await wait_until(c, s, "W2", "document.getElementById('echo')?.textContent === 'GET /second'")
        # Later, not in the evaluation itself: the traversal ends the document it runs in.
        await evaluate(c, s, "W2", "setTimeout(() => history.back(), 0); 1")
        await stack_is(c, s, "W1")
        assert await evaluate(c, s, "W1", "window.alive") == "yes"
        # W2's tab is closed, though the close reached it in the middle of that traversal.
        await until(lambda: _pages_are(chromium, context, [(context, site + "/form")]), "W2's tab to close")
        await chromium.close()
        await c.close()

    run(go())


def test_history_back_on_the_root_web_view_does_nothing(daemon_factory, site, tmp_path):
    """The contract's back on a stack of one: nothing happens. The root web view's page going back
    past its own first entry leaves the page, its connection, its tab and the stack as they are
    (its tab keeps no entry before the page: nothing is below the root)."""
    d = daemon_factory("--chromium", watched_chromium(tmp_path), *NO_SPARE)

    async def go():
        c, s, chromium, context = await watched_session(d, site + "/form", "window.alive === 'yes'")
        assert await chromium.pages({context}) == [(context, site + "/form")]
        # A same-document entry first: going back to the page's first entry is its own POP.
        await evaluate(c, s, "W1", "window.pops = 0; addEventListener('popstate', () => pops++);"
                                   " history.pushState({}, '', '#a'); history.back(); 1")
        await wait_until(c, s, "W1", "window.pops === 1 && location.hash === ''")
        # Back at the first entry, then Forward: traversals run in order, so '#a' comes back in
        # this same document only if the Back left the page where it was.
        await evaluate(c, s, "W1", "history.back(); setTimeout(() => history.forward(), 0); 1")
        await wait_until(c, s, "W1", "window.pops === 2 && location.hash === '#a'")
        assert await evaluate(c, s, "W1", "window.alive") == "yes"
        got = await c.request("session.get", {"session": s})
        assert ids(got["stack"]) == "W1" and got["stack"][0]["connected"] is True
        assert [e for e in c.events("page.disconnected") if e["session"] == s] == []
        assert len([e for e in c.events("stack.changed") if e["session"] == s]) == 1, "only session.create's"
        assert await chromium.pages({context}) == [(context, site + "/form#a")], "no tab opened or lost"
        # The host's own back on the root: nothing either.
        r = await c.request("navigation.back", {"session": s})
        assert r["action"] == "none" and ids(r["stack"]) == "W1"
        await chromium.close()
        await c.close()

    run(go())


CENTER_PIXEL = """new Promise((resolve, reject) => {
  const img = new Image();
  img.onload = () => {
    const canvas = document.createElement("canvas");
    canvas.width = img.width; canvas.height = img.height;
    const g = canvas.getContext("2d");
    g.drawImage(img, 0, 0);
    resolve([img.width, img.height, ...Array.from(g.getImageData(img.width >> 1, img.height >> 1, 1, 1).data.slice(0, 3))]);
  };
  img.onerror = () => reject(new Error("not an image"));
  img.src = "data:image/jpeg;base64,%s";
})"""


def test_after_a_back_swap_the_foreground_shows_the_placeholders_image(daemon_factory, site):
    # The fallback timer is long: the foreground stays until the page reports its render.
    d = daemon_factory("--foreground-timeout-ms", "60000")

    async def go():
        c = await controller(d.ws_url)
        s = await create(c, site + "/pwa")
        await wait_until(c, s, "W1", "document.readyState === 'complete' && !!window.Astro")
        await evaluate(c, s, "W1", "window.next(); 1")
        await stack_is(c, s, "P1 W1")
        await c.next_event("foreground.removed", TIMEOUT, where=lambda p: p["session"] == s and p["reason"] == "rendered")
        snap = (await c.request("placeholder.snapshot", {"session": s, "placeholder": "P1"}))["data"]

        async def center(data):
            return await evaluate(c, s, "W1", CENTER_PIXEL % data)

        w, h, r, g, b = await center(snap)
        assert (w, h) == (390, 844) and r > 200 and g < 60 and b < 60, "the snapshot is the red page"
        await wait_until(c, s, "W1", "!document.getElementById('__bridged_foreground')")
        _, _, r, g, b = await center((await c.request("session.screenshot", {"session": s}))["data"])
        assert b > 200 and r < 60, "the page itself is blue now"

        await c.request("navigation.back", {"session": s})
        await stack_is(c, s, "W1")
        await c.next_event("foreground.shown", TIMEOUT, where=lambda p: p["session"] == s and p["kind"] == "placeholder")
        await wait_until(c, s, "W1", "window.pops === 1 && !!document.getElementById('__bridged_foreground')")
        image = await evaluate(c, s, "W1", "document.getElementById('__bridged_foreground').style.backgroundImage")
        assert snap in image, "the overlay carries the placeholder's snapshot"
        # What the user sees: the snapshot (red), not the page under it (still blue).
        _, _, r, g, b = await center((await c.request("session.screenshot", {"session": s}))["data"])
        assert r > 200 and b < 60, (r, g, b)
        # The page reports its render: the foreground goes, the page shows.
        await evaluate(c, s, "W1", "Astro.jsRpcMethod('pwa-rendered', [])(); 1")
        await c.next_event("foreground.removed", TIMEOUT, where=lambda p: p["session"] == s and p["reason"] == "rendered")
        await wait_until(c, s, "W1", "!document.getElementById('__bridged_foreground')")
        _, _, r, g, b = await center((await c.request("session.screenshot", {"session": s}))["data"])
        assert b > 200 and r < 60, (r, g, b)
        await c.close()

    run(go())


def test_the_snapshot_budget_drops_the_oldest_at_its_limit(daemon_factory, site):
    async def three_snapshots(d):
        c = await controller(d.ws_url)
        s = await create(c, site + "/pwa")
        await wait_until(c, s, "W1", "document.readyState === 'complete' && !!window.Astro")
        for n, stack in [(1, "P1 W1"), (2, "P1 P2 W1"), (3, "P1 P2 P3 W1")]:
            await evaluate(c, s, "W1", "window.next(); 1")
            await stack_is(c, s, stack)
            await wait_until(c, s, "W1", f"window.views === {n} && !document.getElementById('__bridged_foreground')")
        sizes = {}
        for p in ["P1", "P2", "P3"]:
            reply = await c.call("placeholder.snapshot", {"session": s, "placeholder": p})
            if "result" in reply:
                sizes[p] = len(base64.b64decode(reply["result"]["data"]))
            else:
                assert reply["error"]["code"] == "browser-error", reply
        await c.close()
        return sizes

    # The default budget (8 MiB) keeps all three; their sizes set the limits below.
    sizes = run(three_snapshots(daemon_factory()))
    assert set(sizes) == {"P1", "P2", "P3"}, sizes
    # Exactly at the limit: the two newest fit, the oldest went.
    at = sizes["P2"] + sizes["P3"]
    assert run(three_snapshots(daemon_factory("--max-snapshot-bytes", str(at)))) == {"P2": sizes["P2"], "P3": sizes["P3"]}
    # One byte under it: only the newest.
    assert run(three_snapshots(daemon_factory("--max-snapshot-bytes", str(at - 1)))) == {"P3": sizes["P3"]}
    # No budget: none kept, and the flag is checked.
    assert run(three_snapshots(daemon_factory("--max-snapshot-bytes", "0"))) == {}
    from conftest import run_daemon_expect_exit
    code, _, err = run_daemon_expect_exit("--port", "0", "--max-snapshot-bytes=-1")
    assert code != 0 and "--max-snapshot-bytes" in err


def test_viewport_and_user_agent_suffix_take_effect(daemon_factory, site):
    d = daemon_factory("--viewport", "360x640", "--user-agent-suffix", "X/2")

    async def go():
        c = await controller(d.ws_url)
        s = await create(c, site + "/form")
        await wait_until(c, s, "W1", "window.alive === 'yes'")
        assert await evaluate(c, s, "W1", "[innerWidth, innerHeight]") == [360, 640]
        ua = await evaluate(c, s, "W1", "navigator.userAgent")
        assert ua.endswith(" X/2") and "Astro App" not in ua and "Headless" not in ua, ua
        # A web view stacked later is dressed the same way.
        await evaluate(c, s, "W1", f"location.href = '{site}/form?next'; 1")
        await stack_is(c, s, "W1 W2")
        await wait_until(c, s, "W2", "window.alive === 'yes'")
        assert await evaluate(c, s, "W2", "[innerWidth, innerHeight, navigator.userAgent.endsWith(' X/2')]") == [360, 640, True]
        await c.close()

    run(go())


def test_without_chromium_the_error_is_clear_and_plain_sessions_work(daemon_factory):
    d = daemon_factory("--chromium", "/nonexistent/chromium")

    async def go():
        c = await controller(d.ws_url)
        reply = await c.call("session.create", {"url": "http://127.0.0.1/x", "browser": True})
        assert reply["error"]["code"] == "browser-error"
        assert "apt-get install chromium" in reply["error"]["message"]
        assert (await c.request("session.list"))["sessions"] == []
        plain = await c.request("session.create", {"url": "http://127.0.0.1/y"})
        assert plain["webview"] == "W1"
        assert await c.error("session.create", {"browser": "yes"}) == "invalid-params"
        await c.close()

    run(go())


def test_bridged_open_runs_the_astro_demo_in_a_tab(daemon_factory):
    # The url names the daemon's own port, known only once it listens: pick a free one first.
    import socket
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    d = daemon_factory("open", f"http://127.0.0.1:{port}/app/astro.html", "--port", str(port), "--static", DEMO)

    async def go():
        c = await controller(d.ws_url)
        deadline = time.monotonic() + TIMEOUT
        while True:
            sessions = (await c.request("session.list"))["sessions"]
            if sessions and sessions[0]["stack"][0].get("connected"):
                break
            assert time.monotonic() < deadline, sessions
            await asyncio.sleep(0.05)
        s = sessions[0]["session"]
        await wait_until(c, s, "W1", "document.body.dataset.inApp === 'true'")
        assert (await evaluate(c, s, "W1", "navigator.userAgent")).endswith("Astro App/1.0")
        await c.close()

    run(go())
    status, _, body = http_request(d, "/api/sessions")
    assert status == 200 and b'"W1"' in body


def test_open_has_help_and_checks_its_url():
    from conftest import run_daemon_expect_exit
    code, out, err = run_daemon_expect_exit("open", "--help")
    assert code == 0 and "URL" in out and "--chromium" in out
    code, out, err = run_daemon_expect_exit("open", "ftp://x")
    assert code != 0 and "http://" in err
    # A session the daemon refuses (here a url longer than --max-url-bytes): it says why and
    # exits with status 1, rather than serving with nothing open.
    long = "http://127.0.0.1:9/" + "x" * 100
    code, out, err = run_daemon_expect_exit("open", "--port", "0", "--max-url-bytes", "64", long)
    assert code == 1, (code, out, err)
    assert "cannot open " + long in err and "more than --max-url-bytes (64) allows" in err, err
    # A session whose tab cannot open (no Chromium at that path): said, exit status 1.
    code, out, err = run_daemon_expect_exit("open", "--port", "0", "--chromium", "/nonexistent/chromium", "http://127.0.0.1:9/")
    assert code == 1, (code, out, err)
    assert "cannot open http://127.0.0.1:9/" in err and "Chromium is not installed" in err, err


def test_a_crash_disconnects_pages_and_the_next_session_gets_a_new_chromium(daemon_factory, site):
    d = daemon_factory()

    def chromium_main():
        for p in descendants(d.proc.pid):
            try:
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if any(a == b"--remote-debugging-pipe" for a in argv) and not any(a.startswith(b"--type=") for a in argv):
                return p
        return None

    def renderers():
        out = []
        for p in descendants(d.proc.pid):
            try:
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    if b"--type=renderer" in f.read():
                        out.append(p)
            except OSError:
                pass
        return out

    async def go():
        c = await controller(d.ws_url)
        s = await create(c, site + "/form")
        # The renderers killed (the tab's among them): its page disconnects, the daemon lives on.
        victims = renderers()
        assert victims
        for victim in victims:
            os.kill(victim, signal.SIGKILL)
        await c.next_event("page.disconnected", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == "W1")
        # Chromium killed: browser.crashed, and a new session starts a new Chromium.
        s2 = await create(c, site + "/form")
        first = chromium_main()
        assert first
        os.kill(first, signal.SIGKILL)
        await c.next_event("browser.crashed", TIMEOUT, where=lambda p: p["session"] == s2)
        # The page's socket may close before or after Chromium's pipe is seen closed.
        deadline = time.monotonic() + TIMEOUT
        while not any(p["session"] == s2 for p in c.events("page.disconnected")):
            assert time.monotonic() < deadline, "W1 of the crashed browser never disconnected"
            await asyncio.sleep(0.05)
        s3 = await create(c, site + "/form")
        await wait_until(c, s3, "W1", "window.alive === 'yes'")
        second = chromium_main()
        assert second and second != first
        assert await c.error("webview.evaluate", {"session": s2, "webview": "W1", "expression": "1"}) == "browser-error"
        await c.close()

    run(go())


def test_a_page_that_cannot_load_is_a_failed_web_view(daemon_factory, site):
    """A web view whose page cannot load (a refused port): `webview.failed`, shown as failed by
    `session.get`, popped by a back (docs/PROTOCOL.md)."""
    d = daemon_factory()

    async def go():
        c = await controller(d.ws_url)
        s = await create(c, site + "/form")
        down = "http://127.0.0.1:9/down"
        r = await c.request("navigation.navigateToUrl", {"session": s, "url": down})
        assert r["webview"] == "W2"
        failed = await c.next_event("webview.failed", TIMEOUT, where=lambda p: p["session"] == s)
        assert failed["webview"] == "W2" and failed["url"] == down, failed
        # (Chromium refuses port 9 itself: net::ERR_UNSAFE_PORT.)
        assert failed["reason"].startswith("net::ERR_"), failed
        got = await c.request("session.get", {"session": s})
        assert got["failed"] == [{"webview": "W2", "url": down, "reason": failed["reason"]}]
        reply = await c.call("session.screenshot", {"session": s})
        assert reply["error"]["code"] == "browser-error" and failed["reason"] in reply["error"]["message"]
        back = await c.request("navigation.back", {"session": s})
        assert back["removed"] == ["W2"] and ids(back["stack"]) == "W1"
        assert (await c.request("session.get", {"session": s}))["failed"] == []

        # A port nothing listens on: refused.
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{sock.getsockname()[1]}/"
        sock.close()
        await c.request("navigation.navigateToUrl", {"session": s, "url": refused})
        failed = await c.next_event("webview.failed", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == "W3")
        assert failed["url"] == refused and failed["reason"] == "net::ERR_CONNECTION_REFUSED", failed
        await c.close()

    run(go())


_SWIFT_DESCRIPTION = re.compile(r"^\w+\((\w+: |#)|\[\d+(, \d+)+\]")


def _strings(value):
    """Every string in a decoded JSON value (keys' values, nested)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_a_recorded_browser_session_replays_without_chromium(daemon_factory, site, tmp_path):
    """`serve --record` of a browser session in which a page does `location.href = …`: one
    controller hello (the test's), no page frame the page did not send, host lines as
    structured JSON; `bridged replay` (no Chromium) finds it identical."""
    import json
    import subprocess
    from conftest import bridged_bin

    rec = tmp_path / "rec"
    d = daemon_factory("--record", str(rec))

    async def go():
        c = await controller(d.ws_url)
        s = await create(c, site + "/form")
        await wait_until(c, s, "W1", "window.alive === 'yes'")
        await evaluate(c, s, "W1", f"location.href = '{site}/assigned'; 1")
        await stack_is(c, s, "W1 W2")
        await c.next_event("page.connected", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == "W2")
        await c.request("navigation.back", {"session": s})
        await c.close()

    run(go())
    assert d.stop() == 0
    files = list(rec.glob("*.jsonl"))
    assert len(files) == 1, files
    lines = [json.loads(l) for l in files[0].read_text().splitlines()]  # every line is JSON
    frames = [(l["c"], json.loads(l["text"])) for l in lines[1:] if l["k"] == "in"]
    hellos = [(who, f) for who, f in frames if f.get("method") == "hello"]
    controllers = [who for who, f in hellos if f["params"].get("role") == "controller"]
    assert len(controllers) == 1, hellos
    assert not [f for _, f in frames if f.get("event") in ("navigate", "back")], "a page frame the page did not send"
    # Nothing but the test's controller subscribes; two pages (/form and /assigned), one
    # connection each.
    assert {who for who, f in frames if f.get("method") == "session.subscribe"} == set(controllers), frames
    assert len({who for who, f in hellos if f["params"].get("role") == "page"}) == 2, hellos
    # Host lines are data: no Swift `description` strings, no byte arrays.
    for l in lines[1:]:
        if l["k"] in ("host", "host-result"):
            assert isinstance(l.get("what"), str) and l["what"], l
            for text in _strings(l):
                assert not _SWIFT_DESCRIPTION.search(text), ("a Swift description in a host line", l)
    assert any(l["k"] == "host-result" and l["what"] == "navigation-stopped" and l.get("url", "").endswith("/assigned")
               for l in lines[1:]), lines
    work = [l["what"] for l in lines[1:] if l["k"] == "host"]
    results = [l["what"] for l in lines[1:] if l["k"] == "host-result"]
    for what in ("open-tab", "evaluate", "close-tab"):
        assert what in work, (what, work)
    for what in ("tab-opened", "answered", "navigation-stopped"):
        assert what in results, (what, results)
    p = subprocess.run([bridged_bin(), "replay", str(files[0])], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "identical" in p.stdout


async def _spares(c, s, chromium, context):
    """The tabs of the session's context that are no web view's: [(targetId, url)]."""
    mine = set((await c.request("session.get", {"session": s}))["targetIds"].values())
    return [(t, url) for _, t, url in await chromium.targets({context}) if t not in mine]


async def _contexts_besides(chromium, known):
    return await chromium.contexts() - known


async def _targets_of(chromium, context):
    return [(t, url) for _, t, url in await chromium.targets({context})]


async def _tabs_are(chromium, context, expected):
    return {t for _, t, _ in await chromium.targets({context})} == expected


def test_a_sessions_spare_tab_becomes_its_next_web_view_and_goes_with_it(daemon_factory, site, tmp_path):
    """docs/BROWSER.md, "Spare tabs": one spare per session, made once a page has loaded, taken
    by the next classic web view (its target id becomes that web view's), replaced, and closed
    with the session's context; other sessions' spares are their own."""
    d = daemon_factory("--chromium", watched_chromium(tmp_path))

    async def one_spare(c, s, chromium, context):
        spares = await _spares(c, s, chromium, context)
        return spares[0] if len(spares) == 1 and spares[0][1] == "about:blank" else None

    async def go():
        c, s, chromium, context = await watched_session(d, site + "/form", "window.alive === 'yes'")
        first, _ = await until(lambda: one_spare(c, s, chromium, context), "the session's spare tab")
        # Then a context made ahead for the next session, with a spare tab of its own.
        (ahead,) = await until(lambda: _contexts_besides(chromium, {context}), "a context for the next session")
        (ahead_tab,) = await until(lambda: _targets_of(chromium, ahead), "its spare tab")
        assert ahead_tab[1] == "about:blank"
        # The second session is that context, its root that tab.
        s2 = await create(c, site + "/form")
        got = await c.request("session.get", {"session": s2})
        context2 = got["browserContextId"]
        assert (context2, got["targetIds"]["W1"]) == (ahead, ahead_tab[0])
        # A spare of its own, in its own context.
        other, _ = await until(lambda: one_spare(c, s2, chromium, context2), "the other session's spare")
        assert other != first

        # The next classic web view is the spare: W2's tab is that target, on W2's page.
        await evaluate(c, s, "W1", f"location.href = '{site}/second'; 1")
        await stack_is(c, s, "W1 W2")
        await wait_until(c, s, "W2", "document.getElementById('echo')?.textContent === 'GET /second'")
        targets = (await c.request("session.get", {"session": s}))["targetIds"]
        assert targets["W2"] == first
        assert await evaluate(c, s, "W2", "[screen.width, navigator.maxTouchPoints > 0, navigator.userAgent.endsWith(' Astro App/1.0')]") == [390, True, True]
        # Replaced once W2's page has loaded: a new spare, still one, and never the other's.
        second, _ = await until(lambda: one_spare(c, s, chromium, context), "a new spare")
        assert second not in (first, other, targets["W1"])
        assert await one_spare(c, s2, chromium, context2) == (other, "about:blank")

        # Back: W2's tab closes; the spare stays (one per session).
        await c.request("navigation.back", {"session": s})
        await stack_is(c, s, "W1")
        await until(lambda: _tabs_are(chromium, context, {targets["W1"], second}), "W2's tab to close")

        # The session closes: its context goes with every tab, the spare included; the other
        # session keeps its tab and its spare.
        await c.request("session.close", {"session": s})
        await until(lambda: _without(chromium, context), f"Chromium to dispose of {context}")
        assert [t for _, t, _ in await chromium.targets({context, context2})] == sorted(
            [(await c.request("session.get", {"session": s2}))["targetIds"]["W1"], other])
        await chromium.close()
        await c.close()

    run(go())


def test_without_spare_tabs_each_tab_is_a_web_views(daemon_factory, site, tmp_path):
    d = daemon_factory("--chromium", watched_chromium(tmp_path), "--no-spare-tabs")

    async def go():
        c, s, chromium, context = await watched_session(d, site + "/form", "window.alive === 'yes'")
        before = {t for _, t, _ in await chromium.targets({context})}
        assert before == {(await c.request("session.get", {"session": s}))["targetIds"]["W1"]}
        await evaluate(c, s, "W1", f"location.href = '{site}/second'; 1")
        await stack_is(c, s, "W1 W2")
        await wait_until(c, s, "W2", "document.getElementById('echo')?.textContent === 'GET /second'")
        targets = (await c.request("session.get", {"session": s}))["targetIds"]
        assert targets["W2"] not in before, "W2's tab was made for it"
        assert await _spares(c, s, chromium, context) == []
        assert await chromium.contexts() == {context}, "no context made ahead"
        assert await _tabs_are(chromium, context, set(targets.values()))
        await chromium.close()
        await c.close()

    run(go())


def test_a_routed_sessions_selected_tab_shows_its_own_web_view(daemon_factory, site, tmp_path):
    # A routed browser session (--config with two web tabs): the search tab's root web view gets
    # a tab when its tab is first selected, and selecting a tab brings its web view's tab to the
    # front: the shown page is `visible`, the other `hidden`.
    config = tmp_path / "tabs.yaml"
    config.write_text(f"version: 1\nweb_base: {site}/\ntabs:\n  - name: home\n    url: os://home\n  - name: search\n    url: os://search\n")
    d = daemon_factory("--config", str(config))
    visible = "document.visibilityState === 'visible'"

    async def go():
        c = await controller(d.ws_url)
        s = await create(c, site + "/home")
        # Each page writes its visibility where the other (same origin, same context) reads it:
        # webview.* reaches the active stack's web views only.
        track = "document.addEventListener('visibilitychange', () => localStorage.setItem(%r, document.visibilityState)); 1"
        await wait_until(c, s, "W1", visible)
        await evaluate(c, s, "W1", track % "home")
        tree = (await c.request("router.get", {"session": s}))["tree"]
        search = tree["tabs"][1]["stack"][0]["id"]
        await c.request("router.selectTab", {"session": s, "tab": "search"})
        await c.next_event("page.connected", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == search)
        await wait_until(c, s, search, visible + " && location.pathname === '/search'")
        await evaluate(c, s, search, track % "search")
        await wait_until(c, s, search, "localStorage.getItem('home') === 'hidden'")
        await c.request("router.selectTab", {"session": s, "tab": "home"})
        await wait_until(c, s, "W1", visible + " && localStorage.getItem('search') === 'hidden'")
        await c.request("router.selectTab", {"session": s, "tab": "search"})
        await wait_until(c, s, search, visible + " && localStorage.getItem('home') === 'hidden'")
        # The session's tabs: one per web view opened, no more (the spare aside).
        got = await c.request("session.get", {"session": s})
        assert sorted(got["targetIds"]) == sorted(["W1", search]), got
        await c.close()

    run(go())
