"""The dashboard at `/`: real files embedded in the daemon, live over `/bridge` as a read-only
`observer`, watched in headless Chromium (Selenium). Screenshots go to the test artifacts
(selenium_support.artifacts_dir()).

The observer role itself (what it may and may not do) is tested over plain WebSockets first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import pathlib
import socket
import statistics
import time

import pytest

import selenium_support
from bridgeclient import Conn, controller
from browser_support import Controller, ProtocolError
from browser_sessions_support import DEMO, TIMEOUT, create, stack_is, wait_until
from conftest import REPO, http_request

ASSETS = REPO / "Sources" / "BridgeServer" / "Assets" / "dashboard"
needs_browser = pytest.mark.skipif(selenium_support.missing() is not None, reason=selenium_support.missing() or "")


def run(coro, timeout=300):
    return asyncio.run(asyncio.wait_for(coro, timeout))


class Client(Conn):
    """A raw protocol connection (page, controller or observer) that said hello with `hello`."""

    @classmethod
    async def open(cls, ws_url, origin=None, **hello):
        client = await super().open(ws_url, origin=origin)
        client.hello = await client.call("hello", {"protocol": 1, **hello})
        return client

    async def call(self, method, params=None, timeout=15):
        return await super().call(method, params if params is not None else {}, timeout)

    async def next(self, name, **match):
        """The params of the next event `name` whose params include `match`."""
        return await self.next_event(name, 15, where=lambda p: all(p.get(k) == v for k, v in match.items()))


# ---------------------------------------------------------------------------------------------
# The files


def test_the_page_is_the_embedded_files(daemon):
    status, headers, body = http_request(daemon, "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert body == (ASSETS / "index.html").read_bytes()
    for name, kind in (("dashboard.js", "text/javascript"), ("dashboard.css", "text/css")):
        status, headers, body = http_request(daemon, f"/dashboard/{name}")
        assert status == 200 and headers["content-type"].startswith(kind), (name, headers)
        assert body == (ASSETS / name).read_bytes(), name
    assert http_request(daemon, "/dashboard/missing.js")[0] == 404
    assert http_request(daemon, "/dashboard/")[0] == 404
    assert http_request(daemon, "/dashboard/../bridge.js")[1]["content-type"].startswith("text/javascript")  # normalised
    # Pushed, not polled: the page speaks to /bridge as an observer and never fetches the list.
    script = (ASSETS / "dashboard.js").read_text()
    assert '"observer"' in script and "/api/sessions\"" not in script and "setInterval(refresh" not in script


# ---------------------------------------------------------------------------------------------
# The observer role


def test_observer_may_list_get_and_subscribe_but_never_change_or_see_a_token(daemon):
    async def main():
        obs = await Client.open(daemon.ws_url, role="observer")
        result = obs.hello["result"]
        assert result["protocol"] == 1 and result["observer"].startswith("o") and result["tokenRequired"] is False
        assert (await obs.call("session.subscribe", {}))["result"] == {}
        page = await Client.open(daemon.ws_url, role="page", url="http://127.0.0.1/app/")
        sid = page.hello["result"]["session"]
        await obs.next("stack.changed", session=sid)
        listed = (await obs.call("session.list"))["result"]["sessions"]
        assert [s["session"] for s in listed] == [sid]
        got = (await obs.call("session.get", {"session": sid}))["result"]
        assert [i["id"] for i in got["stack"]] == ["W1"]
        assert "token" not in json.dumps(got)
        assert (await obs.call("navigation.canGoBack", {"session": sid}))["result"] == {"canGoBack": False}
        for method, params in (("navigation.back", {"session": sid}), ("navigation.popToRoot", {"session": sid}),
                               ("session.close", {"session": sid}), ("session.create", {}),
                               ("navigation.navigateToUrl", {"session": sid, "url": "http://127.0.0.1/x"}),
                               ("pwa-navigate", {}), ("router.perform", {"session": sid, "action": "goBack"})):
            reply = await obs.call(method, params)
            assert reply["error"]["code"] == "not-allowed", (method, reply)
        assert (await obs.call("no.such"))["error"]["code"] == "unknown-method"
        assert (await obs.call("hello", {"protocol": 1, "role": "observer"}))["error"]["code"] == "conflict"
        # A classic navigation: controllers get the claim, the observer does not.
        ctl = await Client.open(daemon.ws_url, role="controller")
        await ctl.call("session.subscribe", {"session": sid})
        await page.send({"event": "navigate", "params": {"url": "http://127.0.0.1/app/next"}})
        opened = await obs.next("webview.open", session=sid)
        assert opened == {"session": sid, "webview": "W2", "url": "http://127.0.0.1/app/next"}
        assert "token" in await ctl.next("webview.open", session=sid)
        # Nothing changed by the observer: the stack is the page's doing only.
        got = (await obs.call("session.get", {"session": sid}))["result"]
        assert [i["id"] for i in got["stack"]] == ["W1", "W2"]
        bad = await Client.open(daemon.ws_url, role="observer", handles=["navigate"])
        assert bad.hello["error"]["code"] == "invalid-params"

    run(main())


def test_observer_with_a_configured_token(daemon_factory):
    d = daemon_factory("--token", "s3cret")

    async def main():
        # Loopback: allowed without the token (read-only), refused with a wrong one.
        plain = await Client.open(d.ws_url, role="observer")
        assert plain.hello["result"]["tokenRequired"] is True
        wrong = await Client.open(d.ws_url, role="observer", token="nope")
        assert wrong.hello["error"]["code"] == "not-allowed"
        right = await Client.open(d.ws_url, role="observer", token="s3cret")
        assert "result" in right.hello

    run(main())


def test_observer_from_a_page_of_another_origin_needs_the_token(daemon_factory):
    """A loopback peer is not enough when the page comes from elsewhere (e.g. behind a proxy)."""
    d = daemon_factory("--token", "s3cret", "--allow-origin", "https://app.example")

    async def main():
        foreign = await Client.open(d.ws_url, origin="https://app.example", role="observer")
        assert foreign.hello["error"]["code"] == "not-allowed"
        with_token = await Client.open(d.ws_url, origin="https://app.example", role="observer", token="s3cret")
        assert "result" in with_token.hello
        local = await Client.open(d.ws_url, origin=f"http://127.0.0.1:{d.port}", role="observer")
        assert "result" in local.hello

    run(main())


def non_loopback_address() -> str | None:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))  # no packet is sent; picks the outgoing interface
            address = s.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") else address


@pytest.mark.skipif(non_loopback_address() is None, reason="this machine has no non-loopback IPv4 address")
def test_observer_from_elsewhere_needs_the_token(daemon_factory):
    d = daemon_factory("--host", "0.0.0.0", "--token", "s3cret")
    url = f"ws://{non_loopback_address()}:{d.port}/bridge"

    async def main():
        refused = await Client.open(url, role="observer")
        assert refused.hello["error"]["code"] == "not-allowed"
        allowed = await Client.open(url, role="observer", token="s3cret")
        assert "result" in allowed.hello

    run(main())


# ---------------------------------------------------------------------------------------------
# The page, live in Chromium


class Browser:
    def __init__(self, driver):
        self.driver = driver

    async def js(self, script, *args):
        return await asyncio.to_thread(self.driver.execute_script, script, *args)

    async def until(self, script, what, timeout=15.0, *args):
        """Polls `script` (in the page) until truthy: the DOM of another process has no event
        the test could wait on."""
        deadline = time.monotonic() + timeout
        while True:
            value = await self.js(script, *args)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            await asyncio.sleep(0.02)

    @classmethod
    @contextlib.asynccontextmanager
    async def started(cls):
        """A headless Chromium under Selenium for the test's length."""
        driver = await asyncio.to_thread(selenium_support.chrome)
        try:
            yield cls(driver)
        finally:
            await asyncio.to_thread(driver.quit)

    async def open(self, url):
        await asyncio.to_thread(self.driver.get, url)
        await self.until("return document.getElementById('conn').dataset.state === 'open'", "the dashboard's connection")


CARD = "document.querySelector('section.session[data-session=\"' + arguments[0] + '\"]')"


@needs_browser
def test_the_dashboard_follows_every_change_live(daemon_factory):
    d = daemon_factory("--foreground-timeout-ms", "400")

    async def main():
        async with Browser.started() as b:
            await b.open(d.url + "/")
            ctl = await Controller.open(d.ws_url)
            await ctl.call("session.subscribe", {"events": ["stack.changed", "foreground.removed", "pwa-rendered"]})
            page = await Client.open(d.ws_url, role="page", url="http://127.0.0.1/app/")
            sid = page.hello["result"]["session"]
            await b.until(f"return {CARD}", "the new session's card", 15.0, sid)

            # Event → DOM: the controller's stack.changed time against the card's draw time.
            delays = []
            expected = ["W1"]
            for step in range(12):
                ctl.clear()
                reply = await page.call("pwa-navigate", {"url": f"http://127.0.0.1/app/#/s{step}"})
                expected = [i["id"] for i in reply["result"]["stack"]]
                event = await ctl.wait_event("stack.changed", session=sid)
                at = time.time() * 1000
                drawn = await b.until(f"const c = {CARD}; return c && c.dataset.stack === arguments[1] && c.dataset.renderedAt",
                                      f"stack {expected}", 15.0, sid, " ".join(expected))
                assert [i["id"] for i in event["params"]["stack"]] == expected
                delays.append(float(drawn) - at)
                await page.call("pwa-rendered")
                await ctl.wait_event("foreground.removed", session=sid, reason="rendered")
            print(f"event → DOM (ms): median {statistics.median(delays):.1f}, max {max(delays):.1f}: {delays}")
            assert statistics.median(delays) < 100, delays
            assert max(delays) < 1000, delays  # a loaded machine may stall once; never for long

            # The boxes: P1…P12 then W1 (*P), a foreground over W1 with its countdown.
            await page.call("pwa-navigate", {"url": "http://127.0.0.1/app/#/last"})
            count = await b.until(f"const c = {CARD}; const n = c && c.querySelector('.item[data-id=W1] .cover .count');"
                                  " return n && n.textContent", "the countdown", 15.0, sid)
            assert count.endswith("ms") or count == "fallback due", count
            selenium_support.screenshot(b.driver, "dashboard-foreground")
            notation = await b.js(f"return {CARD}.dataset.notation", sid)
            assert notation.endswith("P13 W1(*P)"), notation
            mode = await b.js(f"return {CARD}.querySelector('.item[data-id=W1] .mode').textContent", sid)
            assert mode == "*P"
            # The fallback fires; the late pwa-rendered is highlighted in the timeline.
            await ctl.wait_event("foreground.removed", session=sid, reason="timeout")
            await page.call("pwa-rendered")
            await ctl.wait_event("pwa-rendered", session=sid, late=True)
            late = await b.until(f"const l = {CARD}.querySelector('.timeline li.late'); return l && l.textContent",
                                 "a late render in the timeline", 15.0, sid)
            assert "late pwa-rendered from W1" in late or "timeout" in late, late
            await b.until(f"return [...{CARD}.querySelectorAll('.timeline li.late')].some(l => l.textContent.includes('late pwa-rendered'))",
                          "the late pwa-rendered entry", 15.0, sid)
            timeline = await b.js(f"return {CARD}.querySelector('.timeline').textContent", sid)
            assert "pwa-navigate: P1 W1(*P)" in timeline and "removed: rendered after" in timeline
            latency = await b.js(f"return {CARD}.querySelector('.lat').textContent", sid)
            assert "p50" in latency and "p99" in latency and "(12)" in latency, latency

            # A classic web view without a page: a dashed *C box.
            await page.send({"event": "navigate", "params": {"url": "http://127.0.0.1/app/classic"}})
            await b.until(f"return {CARD}.dataset.notation.endsWith('W2(*C)~')", "W2 on the dashboard", 15.0, sid)
            classes = await b.js(f"return {CARD}.querySelector('.item[data-id=W2]').className", sid)
            assert "off" in classes and "webview" in classes
            selenium_support.screenshot(b.driver, "dashboard-session")
            await ctl.close()

    run(main())


@needs_browser
def test_buttons_only_with_the_token(daemon_factory):
    d = daemon_factory("--token", "s3cret")

    async def main():
        async with Browser.started() as b:
            ctl = await Controller.open(d.ws_url, token="s3cret")
            created = await ctl.call("session.create", {"url": "http://127.0.0.1/app/"})
            sid = created["session"]
            await ctl.call("navigation.navigateToUrl", {"session": sid, "url": "http://127.0.0.1/app/a"})
            await ctl.call("navigation.navigateToUrl", {"session": sid, "url": "http://127.0.0.1/app/b"})

            # With a token, the dashboard itself needs it: the one-time link (or the token) as
            # `/?token=` sets the cookie and redirects to `/`.
            await b.open(d.url + "/?token=s3cret")
            await b.until(f"return {CARD} && {CARD}.dataset.stack === 'W1 W2 W3'", "the session", 15.0, sid)
            assert await b.js(f"return {CARD}.querySelectorAll('button').length", sid) == 0, "no token, no buttons"

            await b.open(d.url + "/#token=s3cret")
            await b.until(f"return {CARD} && {CARD}.querySelectorAll('button[data-action]').length === 3", "the buttons", 15.0, sid)
            assert "s3cret" not in await b.js("return location.href"), "the token leaves the address bar"
            await b.js(f"{CARD}.querySelector('button[data-action=\"navigation.back\"]').click()", sid)
            await b.until(f"return {CARD}.dataset.stack === 'W1 W2'", "the back", 15.0, sid)
            assert await ctl.stack(sid) == ["W1", "W2"]
            await b.js(f"{CARD}.querySelector('button[data-action=\"navigation.popToRoot\"]').click()", sid)
            await b.until(f"return {CARD}.dataset.stack === 'W1'", "popToRoot", 15.0, sid)
            selenium_support.screenshot(b.driver, "dashboard-buttons")
            await b.js(f"{CARD}.querySelector('button[data-action=\"session.close\"]').click()", sid)
            await b.until(f"return !{CARD} || {CARD}.classList.contains('closed')", "the close", 15.0, sid)
            with pytest.raises(ProtocolError):
                await ctl.stack(sid)
            await ctl.close()

    run(main())


@needs_browser
def test_a_thousand_sessions_changing_at_once(daemon_factory):
    d = daemon_factory()
    n = 1000

    async def main():
        async with Browser.started() as b:
            await b.open(d.url + "/")
            ctl = await Controller.open(d.ws_url)
            sessions = []
            for _ in range(n):
                sessions.append((await ctl.call("session.create", {"url": "http://127.0.0.1/app/"}))["session"])
            await b.until(f"return window.dashboard.sessions.size === {n}", "1000 sessions on the dashboard", 60.0)
            # A probe of the page's frames: the longest gap between two animation frames.
            await b.js("window.__gaps = []; let last = performance.now();"
                       "(function tick(t) { window.__gaps.push(t - last); last = t; if (!window.__stop) requestAnimationFrame(tick); })(last);")
            # Every session changes at once: 1000 navigations in flight together.
            frames = [json.dumps({"id": 10_000 + i, "method": "navigation.navigateToUrl",
                                  "params": {"session": sid, "url": f"http://127.0.0.1/app/n{i}"}}) for i, sid in enumerate(sessions)]
            for frame in frames:
                await ctl.send_raw(frame)
            await b.until("return [...window.dashboard.sessions.values()].every(s => s.stack.length === 2)",
                          "every session with its new stack", 60.0)
            await b.until("const c = document.querySelector('section.session'); return c && c.dataset.stack === 'W1 W2'",
                          "the first page drawn", 15.0)
            gaps = await b.js("window.__stop = true; return window.__gaps")
            cards = await b.js("return document.querySelectorAll('section.session').length")
            info = await b.js("return document.getElementById('page-info').textContent")
            print(f"{n} sessions: longest frame gap {max(gaps):.0f} ms over {len(gaps)} frames; {cards} cards; {info}")
            assert cards <= 50, "long lists are paged"
            assert f"of {n // 50}" in info, info
            assert max(gaps) < 1000, f"the tab froze for {max(gaps):.0f} ms"
            selenium_support.screenshot(b.driver, "dashboard-1000-sessions")
            await ctl.close()

    run(main())


@needs_browser
def test_a_browser_sessions_placeholder_is_a_thumbnail(daemon_factory):
    """A browser session's pwa-navigate stacks P1 with a snapshot: the dashboard, open before it
    happens, shows that snapshot as an image served by the daemon."""
    d = daemon_factory("--static", DEMO)

    async def main():
        async with Browser.started() as b:
            await b.open(d.url + "/")
            c = await controller(d.ws_url)
            s = await create(c, d.url + "/app/astro.html")
            await wait_until(c, s, "W1", "document.body.dataset.inApp === 'true' && document.body.dataset.renders === '1'")
            await b.until(f"return {CARD} && {CARD}.dataset.stack === 'W1'", "the browser session's card", 15.0, s)
            await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#astro-deals"})
            await stack_is(c, s, "P1 W1")
            await c.next_event("foreground.removed", TIMEOUT, where=lambda p: p["session"] == s and p["reason"] == "rendered")

            url = f"{d.url}/api/sessions/{s}/placeholders/P1.jpg"
            status, headers, jpeg = http_request(d, f"/api/sessions/{s}/placeholders/P1.jpg")
            assert status == 200 and headers["content-type"] == "image/jpeg" and jpeg[:2] == b"\xff\xd8"
            thumb = f"{CARD} && {CARD}.querySelector('.item.placeholder[data-id=P1] img')"
            loaded = await b.until(f"const i = {thumb}; return i && i.complete && i.naturalWidth > 0"
                                   " && [i.src, i.naturalWidth, i.naturalHeight]", "P1's thumbnail loaded", 30.0, s)
            src, width, height = loaded
            assert src == url, src
            assert width > 0 and height > 0
            # The picture the page shows is the snapshot the daemon serves (a phone-shaped viewport).
            assert height > width, (width, height)
            selenium_support.screenshot(b.driver, "dashboard-thumbnail")
            await c.close()

    run(main())
