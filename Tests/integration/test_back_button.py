"""The browser's own Back and Forward buttons, in real Chromium (Selenium `back()` / `forward()`),
on the demo in a plain browser tab (single-tab mode, no controller handling anything).

The walk of the issue: demo → Products → a product → the classic page → Back. The tab shows the
PWA again, and the daemon's stack follows: the classic web view is popped and the tab's state
(`products`) is the web view's state again (its placeholder discarded). Forward after Back is a
new classic navigation: a new web view, claimed by the page that came back. A PWA's own POP
inside one document stays a POP: the stack does not change.

Last, Forward after Back in a browser session, where each web view is a tab of its own.
"""

from __future__ import annotations

import asyncio

import pytest

import selenium_support
from bridgeclient import ids
from browser_sessions_support import (  # noqa: F401 (site is a fixture)
    evaluate, site, stack_is, until, wait_until, watched_chromium, watched_session,
)
from browser_support import DEMO_DIR, Controller
from conftest import REPO, start_daemon

pytestmark = pytest.mark.skipif(selenium_support.missing() is not None, reason=selenium_support.missing() or "")


@pytest.fixture(scope="module", params=["plain", "routing"])
def demo_daemon(request):
    """The demo as `make run` serves it (with the example routing configuration), and without."""
    extra = ["--config", str(REPO / "examples" / "app.yaml")] if request.param == "routing" else []
    d = start_daemon("--static", str(DEMO_DIR), *extra)
    d.kind = request.param
    yield d
    d.stop()


def run(coro, timeout=240):
    return asyncio.run(asyncio.wait_for(coro, timeout))


class Tab:
    """The Selenium driver, called from asyncio (each call in a worker thread)."""

    def __init__(self, driver):
        self.driver = driver

    async def call(self, fn, *args):
        return await asyncio.to_thread(fn, *args)

    async def js(self, script, *args):
        return await self.call(self.driver.execute_script, script, *args)

    async def view(self):
        return await self.js("return document.body && document.body.dataset.view")

    async def wait_view(self, expected, timeout=15.0):
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            got = await self.view()
            if got == expected:
                return
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"the tab shows {got!r}, expected {expected!r} ({self.driver.current_url})")
            await asyncio.sleep(0.05)  # polling the DOM of another process: there is no event to wait on

    async def click(self, css):
        from selenium.webdriver.common.by import By

        element = await self.call(self.driver.find_element, By.CSS_SELECTOR, css)
        await self.call(element.click)


async def stack(ctl, session):
    return " ".join(await ctl.stack(session))


def test_back_and_forward_keep_the_stack_in_step_with_the_tab(demo_daemon):
    async def scenario():
        ctl = await Controller.open(demo_daemon.ws_url)
        await ctl.call("session.subscribe", {})
        driver = await asyncio.to_thread(selenium_support.chrome)
        tab = Tab(driver)
        try:
            await tab.call(driver.get, demo_daemon.url + "/app/")
            created = await ctl.wait_event("session.created")
            session = created["params"]["session"]
            await ctl.wait_event("pwa-rendered", session=session, webview="W1")
            assert await stack(ctl, session) == "W1"

            # Two PWA navigations in W1.
            ctl.clear()
            await tab.click("#nav-products")
            await ctl.wait_event("pwa-rendered", session=session, webview="W1", removed=True)
            await tab.wait_view("products")
            ctl.clear()
            await tab.click("#product-0")
            await ctl.wait_event("pwa-rendered", session=session, webview="W1", removed=True)
            await tab.wait_view("product:0")
            assert await stack(ctl, session) == "P1 P2 W1"

            # The browser's Back inside the PWA's document: a POP, the stack stays.
            ctl.clear()
            await tab.call(driver.back)
            await tab.wait_view("products")
            await ctl.wait_event("pwa-rendered", session=session, webview="W1")
            assert await stack(ctl, session) == "P1 P2 W1", "a PWA's own POP inside one document stays a POP"
            assert not [e for e in ctl.events if e["event"] == "stack.changed"]
            await tab.call(driver.forward)
            await tab.wait_view("product:0")
            await ctl.wait_event("pwa-rendered", session=session, webview="W1")
            assert await stack(ctl, session) == "P1 P2 W1"

            # A classic link: a new web view (W2; another id with routing, whose other tabs
            # hold web views too), the tab goes there (single-tab mode).
            ctl.clear()
            await tab.click("#to-classic")
            pushed = await ctl.wait_event("stack.changed", session=session, cause="navigate")
            classic = pushed["params"]["stack"][-1]["id"]
            await ctl.wait_event("page.connected", session=session, webview=classic)
            await tab.wait_view("classic")
            assert await stack(ctl, session) == f"P1 P2 W1 {classic}"

            # The browser's Back: the tab shows the PWA (at `products`: the product's history
            # entry was replaced by the classic page); the daemon pops W2 and discards P2.
            ctl.clear()
            await tab.call(driver.back)
            await tab.wait_view("products")
            changed = await ctl.wait_event("stack.changed", session=session, cause="history")
            assert [i["id"] for i in changed["params"]["stack"]] == ["P1", "W1"]
            await ctl.wait_event("webview.closed", session=session, webview=classic)
            await ctl.wait_event("page.connected", session=session, webview="W1")
            assert await stack(ctl, session) == "P1 W1"
            got = await ctl.call("session.get", {"session": session})
            w1 = got["stack"][-1]
            assert w1["connected"] is True and "view=products" in w1["url"], w1

            # Forward after Back: a new classic navigation; the classic page claims a new web view.
            ctl.clear()
            await tab.call(driver.forward)
            await tab.wait_view("classic")
            changed = await ctl.wait_event("stack.changed", session=session, cause="history")
            again = changed["params"]["stack"][-1]["id"]
            assert again != classic and again.startswith("W")
            assert [i["id"] for i in changed["params"]["stack"]] == ["P1", "W1", again]
            await ctl.wait_event("page.connected", session=session, webview=again)
            assert await stack(ctl, session) == f"P1 W1 {again}"
            assert f"bridge_webview={again}" in await tab.js("return location.href"), "the address bar claims the new web view"

            # Back again: W3 popped, the PWA shows.
            ctl.clear()
            await tab.call(driver.back)
            await tab.wait_view("products")
            await ctl.wait_event("stack.changed", session=session, cause="history")
            await ctl.wait_event("webview.closed", session=session, webview=again)
            assert await stack(ctl, session) == "P1 W1"

            # The host's back still works on what is left: a swap to home.
            ctl.clear()
            result = await ctl.call("navigation.back", {"session": session})
            assert (result["action"], result["removed"]) == ("swap", ["P1"])
            await tab.wait_view("home")
            assert await stack(ctl, session) == "W1"
            selenium_support.screenshot(driver, f"back-button-{demo_daemon.kind}")
        finally:
            await asyncio.to_thread(driver.quit)
            await ctl.close()

    run(scenario())


# ---------------------------------------------------------------------------------------------
# Forward after Back in a browser session (docs/BROWSER.md): each web view is a tab of its own.


def test_forward_after_back_in_a_browser_session(daemon_factory, site, tmp_path):
    """A classic web view's tab is closed when its page's own Back pops it, so a Forward has
    nothing to come back to: the tab below never left its page and has no entry after it. No web
    view is pushed and no tab opens. In a PWA, Forward after a back-swap is the page's own POP:
    the stack stays."""
    # Without the session's spare tab: the test lists the context's tabs exactly.
    d = daemon_factory("--chromium", watched_chromium(tmp_path), "--foreground-timeout-ms", "60000", "--no-spare-tabs")

    async def go():
        c, s, chromium, context = await watched_session(
            d, site + "/pwa", "document.readyState === 'complete' && !!window.Astro")

        # The PWA: a state (P1 W1), the host's Back (a swap: the page goes back in its history),
        # then the page's own Forward: a POP inside the document, the stack does not follow.
        await evaluate(c, s, "W1", "window.next(); 1")
        await stack_is(c, s, "P1 W1")
        await c.request("navigation.back", {"session": s})
        await stack_is(c, s, "W1")
        await wait_until(c, s, "W1", "window.pops === 1 && location.search === ''")
        await evaluate(c, s, "W1", "history.forward(); 1")
        await wait_until(c, s, "W1", "window.pops === 2 && location.search === '?view=1'")
        assert ids((await c.request("session.get", {"session": s}))["stack"]) == "W1"

        # A classic web view (a tab of its own), left by its page's own Back: popped, tab closed.
        await evaluate(c, s, "W1", f"location.href = '{site}/second'; 1")
        await stack_is(c, s, "W1 W2")
        await wait_until(c, s, "W2", "document.getElementById('echo')?.textContent === 'GET /second'")
        assert await chromium.pages({context}) == sorted([(context, site + "/pwa?view=1"), (context, site + "/second")])
        await evaluate(c, s, "W2", "setTimeout(() => history.back(), 0); 1")
        await stack_is(c, s, "W1")
        await until(lambda: _one_tab(chromium, context), "W2's tab to close")

        # Forward in the tab that is left: no entry after its page, nothing happens. A Back after
        # it (traversals run in order) shows the page is still the same document.
        opened = len(c.events("webview.open"))
        await evaluate(c, s, "W1", "history.forward(); setTimeout(() => history.back(), 0); 1")
        await wait_until(c, s, "W1", "window.pops === 3 && location.search === ''")
        got = await c.request("session.get", {"session": s})
        assert ids(got["stack"]) == "W1" and got["stack"][0]["connected"] is True
        assert len(c.events("webview.open")) == opened, "Forward pushed no web view"
        assert await chromium.pages({context}) == [(context, site + "/pwa")], "no tab opened"
        assert await c.error("webview.evaluate", {"session": s, "webview": "W2", "expression": "1"}) == "unknown-webview"
        await chromium.close()
        await c.close()

    run(go())


async def _one_tab(chromium, context):
    return len(await chromium.pages({context})) == 1
