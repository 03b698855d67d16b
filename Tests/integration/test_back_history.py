"""The browser's Back to a PWA page whose URL carries no claim (issue 25, item 4), in a plain
Chromium tab (Selenium), the page importing `/bridge.js` with the default options.

The PWA's first page is opened without a claim: its own `hello` creates the session. It pushes
two states with `history.pushState` (plain URLs: `keepClaimInUrl` is off), then a classic link
opens `classic.html` (a new web view W2, the claim in its URL). The browser's Back loads the PWA
again at a pushed entry, without a claim in its URL: the page client claims W1 from the tab's
memory of its history entries (sessionStorage), with `history: true`, so the daemon pops W2 in
the same session. No second session appears.
"""
from __future__ import annotations

import asyncio

import pytest

import selenium_support
from browser_support import Controller
from conftest import start_daemon

pytestmark = pytest.mark.skipif(selenium_support.missing() is not None, reason=selenium_support.missing() or "")

PWA = """<!doctype html>
<html><head><meta charset="utf-8"><title>pwa</title></head>
<body data-view="">
<p><a id="classic" href="/app/classic.html">a classic page</a></p>
<script type="module">
import { connect } from "/bridge.js";
const view = () => new URLSearchParams(location.search).get("view") ?? "home";
const bridge = await connect();   // the default options: nothing of the claim in pushed URLs
document.body.dataset.view = view();
await bridge.pwaRendered();
window.go = async (name) => {
  const url = location.pathname + "?view=" + name;
  await bridge.pwaNavigate({ url });
  history.pushState({}, "", url);
  document.body.dataset.view = view();
  await bridge.pwaRendered();
  return name;
};
addEventListener("popstate", async () => {
  document.body.dataset.view = view();
  await bridge.pwaRendered();
});
</script>
</body></html>
"""

CLASSIC = """<!doctype html>
<html><head><meta charset="utf-8"><title>classic</title></head>
<body data-view="">
<script type="module">
import { connect } from "/bridge.js";
await connect();
document.body.dataset.view = "classic";
</script>
</body></html>
"""


@pytest.fixture
def pwa_daemon(tmp_path):
    (tmp_path / "index.html").write_text(PWA)
    (tmp_path / "classic.html").write_text(CLASSIC)
    d = start_daemon("--static", str(tmp_path))
    yield d
    d.stop()


class Tab:
    def __init__(self, driver):
        self.driver = driver

    async def js(self, script, *args):
        return await asyncio.to_thread(self.driver.execute_script, script, *args)

    async def wait_view(self, expected, timeout=20.0):
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            got = await self.js("return document.body && document.body.dataset.view")
            if got == expected:
                return
            if loop.time() > deadline:
                raise AssertionError(f"the tab shows {got!r}, expected {expected!r} ({self.driver.current_url})")
            await asyncio.sleep(0.05)  # polling another process's DOM: there is no event to wait on


def test_back_to_a_pushed_pwa_entry_claims_its_web_view_in_the_same_session(pwa_daemon):
    async def scenario():
        ctl = await Controller.open(pwa_daemon.ws_url)
        await ctl.call("session.subscribe", {})
        driver = await asyncio.to_thread(selenium_support.chrome)
        tab = Tab(driver)
        try:
            await asyncio.to_thread(driver.get, pwa_daemon.url + "/app/")
            created = await ctl.wait_event("session.created")
            session = created["params"]["session"]
            await tab.wait_view("home")
            await ctl.wait_event("pwa-rendered", session=session, webview="W1")

            # Two states pushed by the PWA itself, with URLs that carry no claim.
            for name in ("one", "two"):
                ctl.clear()
                assert await tab.js("return window.go(arguments[0])", name) == name
                await ctl.wait_event("pwa-rendered", session=session, webview="W1")
            assert "bridge_token" not in await tab.js("return location.href")
            assert " ".join(await ctl.stack(session)) == "P1 P2 W1"

            # A classic link: W2 (the tab goes there, the claim in its URL).
            ctl.clear()
            await tab.js("document.getElementById('classic').click()")
            pushed = await ctl.wait_event("stack.changed", session=session, cause="navigate")
            classic = pushed["params"]["stack"][-1]["id"]
            await ctl.wait_event("page.connected", session=session, webview=classic)
            await tab.wait_view("classic")
            assert " ".join(await ctl.stack(session)) == f"P1 P2 W1 {classic}"

            # The browser's Back: the PWA's document again, at the pushed entry `?view=one`
            # (the classic page replaced the entry of `two`), with no claim in its URL.
            ctl.clear()
            await asyncio.to_thread(driver.back)
            await tab.wait_view("one")
            changed = await ctl.wait_event("stack.changed", session=session, cause="history")
            assert [i["id"] for i in changed["params"]["stack"]] == ["P1", "W1"], changed
            await ctl.wait_event("webview.closed", session=session, webview=classic)
            await ctl.wait_event("page.connected", session=session, webview="W1")
            assert " ".join(await ctl.stack(session)) == "P1 W1"
            assert not [e for e in ctl.seen if e["event"] == "session.created" and e["params"]["session"] != session]
            listed = await ctl.call("session.list", {})
            assert [s["session"] for s in listed["sessions"]] == [session], listed
            # The token is in the tab's memory, not in a URL a user could share.
            stored = await tab.js("return sessionStorage.getItem('bridged.claims')")
            assert stored and "bridge_token" not in stored and session in stored
        finally:
            await asyncio.to_thread(driver.quit)
            await ctl.close()

    asyncio.run(asyncio.wait_for(scenario(), 180))
