"""The bridge protocol end to end: the real daemon, real WebSocket clients (the project's Python client, clients/python, through bridgeclient)."""
import asyncio
import json
import random
import time

from bridgeclient import Conn, controller, ids, page

APP = "http://127.0.0.1/app/"


def run(coro):
    return asyncio.run(coro)


async def claim_from(conn, params):
    """A new page connection claiming the web view of a `load` (or `closed.load`) event."""
    return await page(conn, url=params["pageUrl"], claim=params)


def test_seed_scenario(daemon):
    async def scenario():
        ws = daemon.ws_url
        ctl = await controller(ws)

        a = await page(ws, url=APP)
        sid = a.hello["session"]
        assert a.hello["webview"] == "W1" and ids(a.hello["stack"]) == "W1"
        assert a.hello["pageUrl"] == f"{APP}?bridge_session={sid}&bridge_webview=W1&bridge_token={a.hello['token']}"
        changed = await ctl.next_event("stack.changed")
        assert changed["session"] == sid and changed["cause"] == "hello" and ids(changed["stack"]) == "W1"

        # A PWA navigation: P1 W1.
        r = await a.request("pwa-navigate", {"url": APP + "#/a", "title": "A"})
        assert r["placeholder"] == "P1" and ids(r["stack"]) == "P1 W1"
        assert r["stack"][0] == {"id": "P1", "kind": "placeholder", "of": "W1", "url": APP}
        assert r["stack"][1]["mode"] == "pwa" and r["stack"][1]["url"] == APP + "#/a"
        shown = await ctl.next_event("foreground.shown")
        assert shown == {"session": sid, "webview": "W1", "kind": "blank", "timeoutMs": 1000}
        assert (await a.request("pwa-rendered"))["removed"] is True
        removed = await ctl.next_event("foreground.removed")
        assert removed["reason"] == "rendered"

        # A classic navigation: P1 W1 W2; single-tab mode sends page A to W2.
        await a.event("navigate", {"url": "http://127.0.0.1/app/classic.html"})
        load = await a.next_event("load")
        assert load["webview"] == "W2" and load["session"] == sid
        assert await a.closed() == 1000
        b = await claim_from(ws, load)
        assert ids(b.hello["stack"]) == "P1 W1 W2"
        assert [i["connected"] for i in b.hello["stack"] if i["kind"] == "webview"] == [False, True]

        # Back into the PWA in a new web view: P1 W1 W2 W3.
        await b.event("navigate", {"url": APP + "#/b"})
        load = await b.next_event("load")
        assert load["webview"] == "W3"
        assert await b.closed() == 1000
        c = await claim_from(ws, load)
        assert ids(c.hello["stack"]) == "P1 W1 W2 W3"

        # Two PWA navigations: P1 W1 W2 P2 P3 W3.
        for n, url in enumerate([APP + "#/c", APP + "#/d"]):
            r = await c.request("pwa-navigate", {"url": url})
            assert r["placeholder"] == f"P{n + 2}"
            await c.request("pwa-rendered")
        session = await ctl.request("session.get", {"session": sid})
        assert ids(session["stack"]) == "P1 W1 W2 P2 P3 W3"
        assert session["foreground"] is None

        # Six backs.
        expected = [
            ("swap", ["P3"], "P1 W1 W2 P2 W3"),
            ("swap", ["P2"], "P1 W1 W2 W3"),
            ("pop", ["W3"], "P1 W1 W2"),
            ("pop", ["W2"], "P1 W1"),
            ("swap", ["P1"], "W1"),
            ("none", [], "W1"),
        ]
        on_top = c
        for step, (action, removed, stack) in enumerate(expected, 1):
            r = await ctl.request("navigation.back", {"session": sid})
            assert (r["action"], r["removed"], ids(r["stack"])) == (action, removed, stack), f"back {step}"
            if action == "swap":
                back = await on_top.next_event("back")
                assert back["placeholder"] == removed[0], f"back {step}"
                fg = await ctl.next_event("foreground.shown", where=lambda p: p["kind"] == "placeholder")
                assert fg["webview"] == on_top.hello["webview"]
                await on_top.request("pwa-rendered")
            elif action == "pop":
                closed = await on_top.next_event("closed")
                assert closed["reason"] == "popped"
                assert await on_top.closed() == 1000, f"back {step}: the popped page is closed with 1000"
                on_top = await claim_from(ws, closed["load"])
        assert (await ctl.request("navigation.canGoBack", {"session": sid}))["canGoBack"] is False
        # The back events reached the right pages: page C twice, page A's successor once.
        assert len(c.events("back")) == 2

    run(scenario())


def test_foreground_timeout_and_rendered_latency(daemon):
    async def scenario():
        ctl = await controller(daemon.ws_url)
        p = await page(daemon.ws_url)
        t0 = time.monotonic()
        await p.request("pwa-navigate", {"url": APP + "#/slow"})
        removed = await ctl.next_event("foreground.removed", timeout=30)
        elapsed = (time.monotonic() - t0) * 1000
        assert removed["reason"] == "timeout"
        # Never early; how late depends on the machine's load (lower bounds only).
        assert removed["latencyMs"] >= 1000, removed
        assert elapsed >= 1000
        late = await p.request("pwa-rendered")
        assert late == {"removed": False}
        observed = await ctl.next_event("pwa-rendered")
        assert observed["late"] is True and observed["removed"] is False

        await p.request("pwa-navigate", {"url": APP + "#/fast"})
        await asyncio.sleep(0.2)  # the page takes ~200 ms to render: this is the thing measured
        r = await p.request("pwa-rendered")
        assert r["removed"] is True and r["reason"] == "rendered"
        assert r["latencyMs"] >= 190, r
        removed = await ctl.next_event("foreground.removed")
        assert removed["reason"] == "rendered" and removed["latencyMs"] == r["latencyMs"]

    run(scenario())


def test_foreground_timeout_flag(daemon_factory):
    d = daemon_factory("--foreground-timeout-ms", "150")

    async def scenario():
        ctl = await controller(d.ws_url)
        p = await page(d.ws_url)
        await p.request("pwa-navigate", {})
        shown = await ctl.next_event("foreground.shown")
        assert shown["timeoutMs"] == 150
        removed = await ctl.next_event("foreground.removed", timeout=30)
        assert removed["reason"] == "timeout" and removed["latencyMs"] >= 150

    run(scenario())


def test_every_error_code(daemon_factory):
    d = daemon_factory("--max-sessions", "2", "--max-stack-depth", "3", "--token", "secret")

    async def scenario():
        ws = d.ws_url
        fresh = await Conn.open(ws)
        await fresh.send_raw("{not json")
        await fresh.send_raw("[1,2]")
        await fresh.send_raw('{"id":"7","method":"hello"}')
        await fresh._wait(lambda: fresh.frames[2] if len(fresh.frames) >= 3 else None, 5, "3 replies")
        assert [f["error"]["code"] for f in fresh.frames[:3]] == ["parse-error", "invalid-request", "invalid-request"]
        assert all(f["id"] is None for f in fresh.frames[:3])
        assert await fresh.error("session.list") == "not-ready"
        assert await fresh.error("hello", {"protocol": 2, "role": "page"}) == "invalid-params"
        assert await fresh.error("hello", {"protocol": 1, "role": "controller"}) == "not-allowed"
        assert await fresh.error("hello", {"protocol": 1, "role": "page", "session": "s-nope", "webview": "W1", "token": "x"}) == "unknown-session"

        ctl = await controller(ws, token="secret")
        assert await ctl.error("no.such.method") == "unknown-method"
        assert await ctl.error("pwa-navigate") == "not-allowed"
        assert await ctl.error("session.get", {"session": "s-missing"}) == "unknown-session"
        assert await ctl.error("hello", {"protocol": 1, "role": "controller", "token": "secret"}) == "conflict"

        p = await page(ws)
        sid = p.hello["session"]
        assert await p.error("session.list") == "not-allowed"
        bad_claim = {"protocol": 1, "role": "page", "session": sid, "webview": "W9", "token": p.hello["token"]}
        other = await Conn.open(ws)
        assert await other.error("hello", bad_claim) == "unknown-webview"
        assert await other.error("hello", dict(bad_claim, webview="W1", token="wrong")) == "not-allowed"

        # The stack depth limit (3): P1 W1, then P2 … would be the fourth item.
        await p.request("pwa-navigate", {})
        await p.request("pwa-navigate", {})
        assert await p.error("pwa-navigate", {}) == "limit-exceeded"
        assert await ctl.error("navigation.navigateToUrl", {"session": sid, "url": "http://127.0.0.1/x"}) == "limit-exceeded"
        assert ids((await ctl.request("session.get", {"session": sid}))["stack"]) == "P1 P2 W1"

        # Max sessions (2): one exists; a second is fine; a third is refused.
        await ctl.request("session.create", {})
        assert await ctl.error("session.create", {}) == "limit-exceeded"
        third = await Conn.open(ws)
        assert await third.error("hello", {"protocol": 1, "role": "page"}) == "limit-exceeded"

    run(scenario())


def test_conflict_from_a_covered_page_and_navigate_failed(daemon):
    async def scenario():
        ctl = await controller(daemon.ws_url, handles=["webview.open"])
        p = await page(daemon.ws_url)
        sid = p.hello["session"]
        await ctl.request("navigation.navigateToUrl", {"session": sid, "url": "http://127.0.0.1/other"})
        assert await p.error("pwa-navigate", {}) == "conflict"
        assert await p.error("back", {}) == "conflict"
        await p.event("navigate", {"url": "http://127.0.0.1/elsewhere"})
        failed = await p.next_event("navigate.failed")
        assert failed["code"] == "conflict" and failed["url"] == "http://127.0.0.1/elsewhere"
        s = await ctl.request("session.get", {"session": sid})
        assert ids(s["stack"]) == "W1 W2"

    run(scenario())


def test_a_message_for_a_popped_webview(daemon):
    async def scenario():
        ctl = await controller(daemon.ws_url, handles=["webview.open"])
        p = await page(daemon.ws_url)
        sid = p.hello["session"]
        opened = await ctl.request("navigation.navigateToUrl", {"session": sid, "url": "http://127.0.0.1/two"})
        q = await page(daemon.ws_url, claim={"session": sid, "webview": opened["webview"], "token": opened["token"]})
        await ctl.request("navigation.back", {"session": sid})
        assert (await q.next_event("closed"))["reason"] == "popped"
        assert await q.closed() == 1000
        late = await Conn.open(daemon.ws_url)
        code = await late.error("hello", {"protocol": 1, "role": "page", "session": sid,
                                          "webview": opened["webview"], "token": opened["token"]})
        assert code == "unknown-webview"

    run(scenario())


def test_two_sessions_cannot_touch_each_other(daemon):
    async def scenario():
        ws = daemon.ws_url
        ctl = await controller(ws)
        a = await page(ws, url=APP + "a")
        b = await page(ws, url=APP + "b")
        assert a.hello["session"] != b.hello["session"]
        # B's token does not open A's web view, and A's session id with B's token fails.
        intruder = await Conn.open(ws)
        code = await intruder.error("hello", {"protocol": 1, "role": "page", "session": a.hello["session"],
                                              "webview": "W1", "token": b.hello["token"]})
        assert code == "not-allowed"
        await a.request("pwa-navigate", {"url": APP + "a#1"})
        sb = await ctl.request("session.get", {"session": b.hello["session"]})
        assert ids(sb["stack"]) == "W1" and sb["foreground"] is None
        await b.request("pwa-rendered")
        sa = await ctl.request("session.get", {"session": a.hello["session"]})
        assert sa["foreground"]["webview"] == "W1"  # B's pwa-rendered did not touch A
        # Controller events name their session.
        for ev in ctl.events("stack.changed"):
            assert ev["session"] in (a.hello["session"], b.hello["session"])

    run(scenario())


def test_disconnect_mid_navigation_then_reclaim(daemon):
    async def scenario():
        ws = daemon.ws_url
        ctl = await controller(ws)
        p = await page(ws)
        sid, token = p.hello["session"], p.hello["token"]
        await p.request("pwa-navigate", {"url": APP + "#/x"})
        await p.close()
        removed = await ctl.next_event("foreground.removed")
        assert removed["reason"] == "closed"
        assert {"session": sid, "webview": "W1"} in ctl.events("page.disconnected")
        s = await ctl.request("session.get", {"session": sid})
        assert ids(s["stack"]) == "P1 W1" and s["stack"][1]["connected"] is False
        again = await page(ws, url=APP + "#/x", claim={"session": sid, "webview": "W1", "token": token})
        assert again.hello["webview"] == "W1" and again.hello["stack"][1]["connected"] is True
        await ctl.next_event("page.connected")

    run(scenario())


def test_newest_claim_wins(daemon):
    async def scenario():
        ws = daemon.ws_url
        p = await page(ws)
        claim = {"session": p.hello["session"], "webview": "W1", "token": p.hello["token"]}
        q = await page(ws, claim=claim)
        closed = await p.next_event("closed")
        assert closed["reason"] == "replaced"
        assert await p.closed() == 1000
        assert (await q.request("pwa-navigate", {}))["placeholder"] == "P1"

    run(scenario())


def test_session_close_and_navigate_handler(daemon):
    async def scenario():
        ws = daemon.ws_url
        ctl = await controller(ws, handles=["navigate"])
        created = await ctl.request("session.create", {"url": APP})
        assert created["webview"] == "W1" and "bridge_token=" in created["pageUrl"]
        p = await page(ws, claim=created)
        await p.event("navigate", {"url": "http://127.0.0.1/wanted"})
        nav = await ctl.next_event("navigate")
        assert nav == {"session": created["session"], "webview": "W1", "url": "http://127.0.0.1/wanted"}
        # The handler decides: nothing was pushed until it acts.
        s = await ctl.request("session.get", {"session": created["session"]})
        assert ids(s["stack"]) == "W1" and s["handlers"]["navigate"] == ctl.hello["controller"]
        await ctl.request("session.close", {"session": created["session"]})
        assert (await p.next_event("closed"))["reason"] == "session-closed"
        assert await p.closed() == 1000
        closed = await ctl.next_event("session.closed")
        assert closed == {"session": created["session"], "reason": "closed"}
        assert await ctl.error("session.get", {"session": created["session"]}) == "unknown-session"

    run(scenario())


def test_idle_session_is_discarded(daemon_factory):
    d = daemon_factory("--session-idle-s", "1")

    async def scenario():
        watcher = await controller(d.ws_url)
        p = await page(d.ws_url)
        sid = p.hello["session"]
        await p.close()
        closed = await watcher.next_event("session.closed", timeout=5)
        assert closed == {"session": sid, "reason": "idle"}

    run(scenario())


def test_fuzz_changes_nothing(daemon):
    """Thousands of random and mutated frames: every request answered once, nothing changed."""

    async def scenario():
        ws = daemon.ws_url
        ctl = await controller(ws)
        p = await page(ws)
        sid = p.hello["session"]
        await p.request("pwa-navigate", {"url": APP + "#/1"})
        await p.request("pwa-rendered")
        before = await ctl.request("session.list")
        rng = random.Random(1234)
        valid = [
            {"id": 1, "method": "session.get", "params": {"session": sid}},
            {"id": 2, "method": "hello", "params": {"protocol": 77, "role": "page"}},
            {"id": 3, "method": "navigation.back", "params": {"session": "nope"}},
            {"event": "navigate", "params": {"url": 5}},
        ]
        junk = [b"", b"{", b"null", b"[]", b'{"id":1}', b'{"method":1}', b'{"id":1.5,"method":"x"}',
                b'{"id":9007199254740993,"method":"ping"}', b'{"event":null}', b'"\\ud800"']
        fuzzer = await Conn.open(ws)  # never says hello: it may not change anything
        sent = 0
        for n in range(3000):
            if rng.random() < 0.3:
                data = rng.choice(junk)
            else:
                data = bytearray(json.dumps(rng.choice(valid)).encode())
                for _ in range(rng.randint(1, 4)):
                    op = rng.random()
                    if op < 0.4 and data:
                        data[rng.randrange(len(data))] = rng.randrange(32, 127)
                    elif op < 0.7 and data:
                        del data[rng.randrange(len(data)):]
                    else:
                        data.insert(rng.randrange(len(data) + 1), rng.choice(b'{}[]",:0 -e\\'))
                data = bytes(data)
            try:
                await fuzzer.send_raw(data.decode("utf-8"))
                sent += 1
            except UnicodeDecodeError:
                continue
        # Everything sent before this marker has been answered (one connection keeps order).
        marker = await fuzzer.call("ping")
        assert marker["error"]["code"] == "not-ready"
        after = await ctl.request("session.list")
        assert after == before
        assert fuzzer.close_code is None
        # Requests from the page itself, fuzzed, also leave the stack alone unless they were valid.
        assert (await ctl.request("session.get", {"session": sid}))["stack"] == before["sessions"][0]["stack"]
        assert sent > 2500

    run(scenario())
