"""The js-client in a real browser: headless Chromium (Debian's `chromium`, over the DevTools
protocol) loads the demo from a running `bridged`; a controller reads the daemon's stack after
every step.

Skipped only when chromium is absent (`make deps-test` installs it). Needs the daemon binary
(`swift build -c release`; BRIDGED_BIN overrides the path; see conftest.py), which `make test`
builds first.
"""

from __future__ import annotations

import asyncio

import pytest

from browser_support import ASTRO_USER_AGENT, DEMO_DIR, Browser, Controller, find_chromium
from conftest import start_daemon

CHROMIUM = find_chromium()

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (Debian package `chromium`; `make deps-test` installs it)"
)


@pytest.fixture(scope="module")
def browser_daemon():
    """One daemon for the module, serving the demo at /app/ (as `make run` does)."""
    d = start_daemon("--host", "127.0.0.1", "--static", str(DEMO_DIR))
    yield d
    d.stop()


def run(coro, timeout=180):
    return asyncio.run(asyncio.wait_for(coro, timeout))


async def open_session(daemon, path="/app/"):
    """A controller, a session created for `path`, and a browser tab that claims its W1."""
    ctl = await Controller.open(daemon.ws_url)
    created = await ctl.call("session.create", {"url": daemon.url + path})
    return ctl, created


class Steps:
    """The seed scenario's bookkeeping: the session, the tab, the controller."""

    def __init__(self, ctl, tab, session):
        self.ctl, self.tab, self.session = ctl, tab, session

    async def stack(self):
        return await self.ctl.stack(self.session)

    async def expect_stack(self, expected: str, why: str):
        got = " ".join(await self.stack())
        assert got == expected, f"after {why}: the daemon's stack is {got!r}, expected {expected!r}"

    async def view(self):
        return await self.tab.eval("document.body.dataset.view")

    async def rendered(self, webview, **match):
        return await self.ctl.wait_event("pwa-rendered", session=self.session, webview=webview, **match)

    async def connected(self, webview):
        return await self.ctl.wait_event("page.connected", session=self.session, webview=webview)

    async def back(self):
        return await self.ctl.call("navigation.back", {"session": self.session})


def test_seed_scenario_in_a_real_browser(browser_daemon):
    """P1 W1 W2 P2 P3 W3 built by clicking through the demo, then six backs from the host."""

    async def scenario():
        ctl, created = await open_session(browser_daemon)
        session = created["session"]
        browser = await Browser.launch(CHROMIUM)
        try:
            tab = await browser.new_tab()
            s = Steps(ctl, tab, session)

            # The tab opens the pageUrl handed out by session.create: it claims W1.
            ctl.clear()
            await tab.goto(created["pageUrl"])
            await s.connected("W1")
            await s.rendered("W1", removed=False)  # the initial render
            await s.expect_stack("W1", "the first page")
            assert await s.view() == "home"
            assert "bridge_webview=W1" in await tab.location(), "the claim stays in the address bar"
            assert await tab.eval("document.getElementById('webview').textContent") == "W1"
            assert await tab.eval("document.getElementById('conn').dataset.state") == "open"

            # A PWA navigation: the page awaits pwa-navigate, renders, reports.
            ctl.clear()
            await tab.click("#nav-products")
            await ctl.wait_event("stack.changed", session=session, cause="pwa-navigate")
            await s.rendered("W1", removed=True)
            await s.expect_stack("P1 W1", "a PWA navigation")
            assert await s.view() == "products"

            # A classic link: intercepted, a new web view, the tab goes to its pageUrl.
            ctl.clear()
            await tab.click("#to-classic")
            await s.connected("W2")
            await s.expect_stack("P1 W1 W2", "a classic link")
            assert await s.view() == "classic"
            assert "/app/classic.html?" in await tab.location()

            # A link back into the PWA: another web view, then two PWA navigations in it.
            ctl.clear()
            await tab.click("#to-pwa")
            await s.connected("W3")
            await s.rendered("W3", removed=False)
            await s.expect_stack("P1 W1 W2 W3", "a link into the PWA")
            ctl.clear()
            await tab.click("#nav-products")
            await s.rendered("W3", removed=True)
            await s.expect_stack("P1 W1 W2 P2 W3", "a PWA navigation in W3")
            ctl.clear()
            await tab.click("#product-1")
            await s.rendered("W3", removed=True)
            await s.expect_stack("P1 W1 W2 P2 P3 W3", "a second PWA navigation in W3")
            assert await s.view() == "product:1"

            # Six backs, as the host's back button. A swap makes the page go back and render.
            ctl.clear()
            result = await s.back()
            assert (result["action"], result["removed"]) == ("swap", ["P3"])
            await s.rendered("W3", removed=True)
            await s.expect_stack("P1 W1 W2 P2 W3", "back 1")
            assert await s.view() == "products"

            ctl.clear()
            result = await s.back()
            assert (result["action"], result["removed"]) == ("swap", ["P2"])
            await s.rendered("W3", removed=True)
            await s.expect_stack("P1 W1 W2 W3", "back 2")
            assert await s.view() == "home"

            # A pop: the popped page is sent to the uncovered web view (closed.load).
            ctl.clear()
            result = await s.back()
            assert (result["action"], result["removed"]) == ("pop", ["W3"])
            await s.connected("W2")
            await s.expect_stack("P1 W1 W2", "back 3")
            assert await s.view() == "classic"

            ctl.clear()
            result = await s.back()
            assert (result["action"], result["removed"]) == ("pop", ["W2"])
            await s.connected("W1")
            await s.rendered("W1", removed=False)
            await s.expect_stack("P1 W1", "back 4")
            assert await s.view() == "products", "W1 comes back in the state it was left in"

            # A swap on a page that was reloaded: history.back() still goes to the state below.
            ctl.clear()
            result = await s.back()
            assert (result["action"], result["removed"]) == ("swap", ["P1"])
            await s.rendered("W1")
            await s.expect_stack("W1", "back 5")
            assert await s.view() == "home"

            ctl.clear()
            result = await s.back()
            assert (result["action"], result["removed"]) == ("none", [])
            await s.expect_stack("W1", "back 6")
        finally:
            await browser.close()
            await ctl.close()

    run(scenario())


def test_a_reload_reclaims_the_same_web_view(browser_daemon):
    """The claim is in the address bar (also in pushed urls, as the demo keeps it): a reload re-claims."""

    async def scenario():
        ctl, created = await open_session(browser_daemon)
        session = created["session"]
        browser = await Browser.launch(CHROMIUM)
        try:
            tab = await browser.new_tab()
            s = Steps(ctl, tab, session)
            ctl.clear()
            await tab.goto(created["pageUrl"])
            await s.rendered("W1", removed=False)
            ctl.clear()
            since = tab.mark()
            await tab.click("#nav-about")
            await s.rendered("W1", removed=True)
            await s.expect_stack("P1 W1", "a PWA navigation")
            # The browser process learns of the pushState asynchronously; a reload before that
            # would reload the previous url.
            pushed = await tab.wait_cdp_event("Page.navigatedWithinDocument", since)
            assert "view=about" in pushed["params"]["url"] and "bridge_webview=W1" in pushed["params"]["url"]
            ctl.clear()
            await tab.send("Page.reload")
            await s.connected("W1")
            await s.rendered("W1", removed=False)
            await s.expect_stack("P1 W1", "a reload")
            assert await s.view() == "about", await tab.location()
            # and the host's back still swaps and the page goes back
            ctl.clear()
            result = await s.back()
            assert result["action"] == "swap"
            await s.rendered("W1")
            assert await s.view() == "home"
        finally:
            await browser.close()
            await ctl.close()

    run(scenario())


def test_which_clicks_are_intercepted(browser_daemon):
    """Only clicks that would load another document in this tab become `navigate` events."""

    async def scenario():
        ctl, created = await open_session(browser_daemon, "/app/links.html")
        session = created["session"]
        browser = await Browser.launch(CHROMIUM)
        try:
            tab = await browser.new_tab()
            ctl.clear()
            await tab.goto(created["pageUrl"])
            await ctl.wait_event("page.connected", session=session, webview="W1")
            await tab.eval("window.bridgeReady.then(() => true)")

            # Clicks the bridge must leave alone. Each is followed by an event-ordered check:
            # the daemon sees frames in order, so a later intercepted click proves nothing
            # was sent for the earlier ones.
            since = tab.mark()
            await tab.click("#hash")
            assert (await tab.location()).endswith("#section")
            hashchanges = await tab.eval(  # hashchange is dispatched after the click returns
                "new Promise(r => document.body.dataset.hashchanges ? r(document.body.dataset.hashchanges)"
                " : addEventListener('hashchange', () => r(document.body.dataset.hashchanges), {once: true}))"
            )
            assert hashchanges == "1"
            await tab.click("#pushed")
            assert await tab.eval("document.body.dataset.pushed") == "true"
            await tab.click("#blank")
            opened = await tab.wait_cdp_event("Page.windowOpen", since)  # the browser opened a tab
            assert opened["params"]["url"].endswith("/app/classic.html?blank")
            await tab.click("#modified", ctrl=True)

            # The GET form is intercepted: the daemon pushes W2 for its url.
            await tab.click("#get-submit")
            opened = await ctl.wait_event("stack.changed", session=session, cause="navigate")
            stack = opened["params"]["stack"]
            assert [item["id"] for item in stack] == ["W1", "W2"], stack
            assert stack[-1]["url"].endswith("/app/classic.html?q=tea+pot")
            await ctl.wait_event("page.connected", session=session, webview="W2")
        finally:
            await browser.close()
            await ctl.close()

    run(scenario())


def test_an_astro_pwa_runs_unchanged_with_the_shim(browser_daemon):
    """astro.html only adds <script type="module" src="/bridge.js?astro">; Chromium runs with
    --user-agent containing "Astro App", so the PWA believes it is in the app."""

    async def scenario():
        ctl, created = await open_session(browser_daemon, "/app/astro.html")
        session = created["session"]
        browser = await Browser.launch(CHROMIUM, user_agent=ASTRO_USER_AGENT)
        try:
            tab = await browser.new_tab()
            s = Steps(ctl, tab, session)
            ctl.clear()
            await tab.goto(created["pageUrl"])
            await s.connected("W1")
            await s.rendered("W1", removed=False)
            assert await tab.eval("document.body.dataset.inApp") == "true"
            assert await tab.eval("window.Astro.isRunningInApp()") is True

            ctl.clear()
            await tab.click("#astro-deals")
            await ctl.wait_event("stack.changed", session=session, cause="pwa-navigate")
            # Astro's pwa-navigate carries no url: the shim reports it before pwa-rendered.
            navigated = await ctl.wait_event("pwa-navigated", session=session, webview="W1")
            assert navigated["params"]["url"].endswith("/app/astro.html?page=deals")
            await s.rendered("W1", removed=True)
            ctl.clear()
            await tab.click("#astro-help")
            await s.rendered("W1", removed=True)
            got = await ctl.call("session.get", {"session": session})
            assert [i["id"] for i in got["stack"]] == ["P1", "P2", "W1"]
            assert got["stack"][1]["url"].endswith("?page=deals"), got["stack"]
            assert got["stack"][2]["mode"] == "pwa"

            # The host's back: the shim's bridge calls history.back(); the PWA renders the POP and
            # sends pwa-rendered, never pwa-navigate.
            ctl.clear()
            result = await s.back()
            assert result["action"] == "swap"
            await s.rendered("W1", removed=True)
            assert await s.view() == "deals"
            assert not [e for e in ctl.events if e["event"] == "stack.changed"
                        and e["params"].get("cause") == "pwa-navigate"], "a POP sent pwa-navigate"
            await s.expect_stack("P1 W1", "a back")
        finally:
            await browser.close()
            await ctl.close()

    run(scenario())


def test_without_the_app_user_agent_an_astro_pwa_stays_a_website(browser_daemon):
    async def scenario():
        ctl, created = await open_session(browser_daemon, "/app/astro.html")
        session = created["session"]
        browser = await Browser.launch(CHROMIUM)
        try:
            tab = await browser.new_tab()
            ctl.clear()
            await tab.goto(created["pageUrl"])
            await ctl.wait_event("page.connected", session=session, webview="W1")
            assert await tab.eval("document.body.dataset.inApp") == "false"
            await tab.click("#astro-deals")
            assert await tab.eval("document.body.dataset.view") == "deals"
            # The shim is there, but the PWA did not use it: no placeholder.
            stack = await ctl.stack(session)
            assert stack == ["W1"]
        finally:
            await browser.close()
            await ctl.close()

    run(scenario())
