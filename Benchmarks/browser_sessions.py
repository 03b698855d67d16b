#!/usr/bin/env python3
"""Browser sessions, measured (docs/PERFORMANCE.md, "Browser sessions").

    python3 Benchmarks/browser_sessions.py [--bridged .build/release/bridged] [--rounds 3]
        [--sessions 20] [--webviews 5] [--classic-rounds 7] [--settle 2] [--only NAME,...]
        [-- DAEMON ARGS...]

Prints, from one run (the machine is shared: compare the ratios, measured side by side, more
than the absolute times): session.create {browser:true} → first pwa-rendered (cold and warm
Chromium); the same page loaded in an already open tab (a reload of the top web view, which
passes the interception, reconnects its client and renders: the plain load) against a classic
navigation (`location.href`, a new web view, a new tab) → its first pwa-rendered, interleaved
round by round, each after SETTLE idle seconds, and their ratio; the snapshot cost (ms, bytes); Chromium's memory (PSS) per tab
and per session; SESSIONS × WEBVIEWS sessions at once (stacks checked, no tab left after
closing); and the seed scenario driven by a harness with its own Chromium and /bridge.js
(Tests/integration/browser_support.py, what the project's browser tests do) against the same
scenario in a browser session over the controller protocol, both counting their browser's
start (the browser session in a daemon of its own, counted from the daemon's start) and both
with their Chromium already running, each of those after SETTLE idle seconds. Arguments after
`--` go to the daemons.
`--only` runs a part: create, classic, snapshot, memory, many, seed.
"""
import argparse
import asyncio
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "Tests", "integration"))

from bridgeclient import controller, ids  # noqa: E402
from browser_support import ASTRO_USER_AGENT, Browser, Controller, find_chromium  # noqa: E402
import conftest  # noqa: E402

DEMO = os.path.join(REPO, "js-client", "demo")
T = 60


def now():
    return time.perf_counter()


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def processes_below(pid):
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if fields[0] != "Z":
                children.setdefault(int(fields[1]), []).append(int(name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def pss_kib(pids):
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def renderers(pid):
    n = 0
    for p in processes_below(pid):
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                if b"--type=renderer" in f.read():
                    n += 1
        except OSError:
            pass
    return n


async def rendered(c, s, w):
    return await c.next_event("pwa-rendered", T, where=lambda p: p["session"] == s and p["webview"] == w)


async def rendered_once(c, s, w):
    # Scans every frame (several sessions wait on one connection at once; no shared cursor).
    def find():
        return next((p for p in c.events("pwa-rendered") if p["session"] == s and p["webview"] == w), None)
    return await c._wait(find, T, f"pwa-rendered of {s} {w}")


async def stack(c, s, expected):
    await c.next_event("stack.changed", T, where=lambda p: p["session"] == s and ids(p["stack"]) == expected)


LINK = "(() => { const a = document.createElement('a'); a.id = 'bench-link'; a.href = %r; a.textContent = 'go';" \
       " a.style.cssText = 'display:block;font-size:40px'; document.body.prepend(a); return 1; })()"


async def browser_seed(c, base):
    """The seed scenario in a browser session, over the controller protocol only."""
    s = (await c.request("session.create", {"url": base + "/app/astro.html", "browser": True}, timeout=T))["session"]
    await rendered(c, s, "W1")

    async def click(w, sel):
        await c.request("webview.click", {"session": s, "webview": w, "selector": sel}, timeout=T)

    async def link(w, url):
        await c.request("webview.evaluate", {"session": s, "webview": w, "expression": LINK % url}, timeout=T)
        await click(w, "#bench-link")

    await click("W1", "#astro-deals"); await stack(c, s, "P1 W1"); await rendered(c, s, "W1")
    await link("W1", "/app/classic.html"); await stack(c, s, "P1 W1 W2")
    await c.next_event("page.connected", T, where=lambda p: p["session"] == s and p["webview"] == "W2")
    await link("W2", "/app/astro.html"); await stack(c, s, "P1 W1 W2 W3"); await rendered(c, s, "W3")
    await click("W3", "#astro-deals"); await stack(c, s, "P1 W1 W2 P2 W3"); await rendered(c, s, "W3")
    await click("W3", "#astro-help"); await stack(c, s, "P1 W1 W2 P2 P3 W3"); await rendered(c, s, "W3")
    for expected, swap_of in [("P1 W1 W2 P2 W3", "W3"), ("P1 W1 W2 W3", "W3"), ("P1 W1 W2", None),
                              ("P1 W1", None), ("W1", "W1")]:
        await c.request("navigation.back", {"session": s})
        await stack(c, s, expected)
        if swap_of:
            await rendered(c, s, swap_of)
    await c.request("session.close", {"session": s})


async def harness_seed(d, chromium):
    """The same scenario as the project's browser tests drive it: their own Chromium (with the
    app's user agent), one tab following the daemon's `load`s, /bridge.js in the page."""
    t_launch = now()
    browser = await Browser.launch(chromium, user_agent=ASTRO_USER_AGENT)
    launch = now() - t_launch
    try:
        t0 = now()
        ctl = await Controller.open(d.ws_url)
        await ctl.call("session.subscribe", {})
        created = await ctl.call("session.create", {"url": d.url + "/app/astro.html"})
        s = created["session"]
        tab = await browser.new_tab()
        await tab.goto(created["pageUrl"])

        async def ev(name, **m):
            return await ctl.wait_event(name, timeout=T, session=s, **m)

        async def expect(expected):
            while " ".join(await ctl.stack(s)) != expected:
                await ev("stack.changed")

        await ev("pwa-rendered", webview="W1")
        ctl.clear()
        await tab.click("#astro-deals"); await expect("P1 W1"); await ev("pwa-rendered", webview="W1")
        ctl.clear()
        await tab.eval(LINK % "/app/classic.html"); await tab.click("#bench-link")
        await ev("page.connected", webview="W2"); await expect("P1 W1 W2")
        await tab.eval("new Promise(r => { const t = () => document.body && document.body.dataset.ready ? r(1) : setTimeout(t, 10); t(); })")
        ctl.clear()
        await tab.eval(LINK % "/app/astro.html"); await tab.click("#bench-link")
        await ev("pwa-rendered", webview="W3"); await expect("P1 W1 W2 W3")
        ctl.clear()
        await tab.click("#astro-deals"); await expect("P1 W1 W2 P2 W3"); await ev("pwa-rendered", webview="W3")
        ctl.clear()
        await tab.click("#astro-help"); await expect("P1 W1 W2 P2 P3 W3"); await ev("pwa-rendered", webview="W3")
        for expected, wait in [("P1 W1 W2 P2 W3", ("pwa-rendered", "W3")), ("P1 W1 W2 W3", ("pwa-rendered", "W3")),
                               ("P1 W1 W2", ("page.connected", "W2")), ("P1 W1", ("pwa-rendered", "W1")),
                               ("W1", ("pwa-rendered", "W1"))]:
            ctl.clear()
            await ctl.call("navigation.back", {"session": s})
            await ev(wait[0], webview=wait[1])
            await expect(expected)
        await ctl.call("session.close", {"session": s})
        await ctl.close()
        return now() - t0, launch
    finally:
        await browser.close()


async def main(args):
    d = conftest.start_daemon("--static", DEMO, *args.daemon_args)
    base = d.url
    out = {"load average at start": load()}
    try:
        c = await controller(d.ws_url)
        # Cold and warm: create → the root's first pwa-rendered.
        for label in ["cold", "warm"]:
            t0 = now()
            s = (await c.request("session.create", {"url": base + "/app/astro.html", "browser": True}, timeout=T))["session"]
            await rendered(c, s, "W1")
            out[f"create→first pwa-rendered ({label})"] = f"{(now() - t0) * 1000:.0f} ms"
            if label == "warm":
                break
            await c.request("session.close", {"session": s})
        # The plain load (the top web view's page reloaded in its open tab) against a classic
        # navigation (a new web view, a new tab), each to the page's first pwa-rendered,
        # interleaved round by round. The same page, the same client, the same server.
        top = "W1"
        if "classic" in args.only:
            plain, times = [], []
            for i in range(args.classic_rounds):
                top = f"W{i + 1}"
                # Each measured from an idle daemon and browser: what the last step set going in
                # the background (a spare tab) is done, as when a user taps seconds later.
                await asyncio.sleep(args.settle)
                t0 = now()
                await c.request("webview.evaluate", {"session": s, "webview": top, "expression": "location.reload(); 1"})
                await rendered(c, s, top)
                plain.append((now() - t0) * 1000)
                await asyncio.sleep(args.settle)
                t0 = now()
                await c.request("webview.evaluate", {"session": s, "webview": top,
                                                     "expression": "location.href = '/app/astro.html?page=deals&n=%d'; 1" % i})
                await rendered(c, s, f"W{i + 2}")
                times.append((now() - t0) * 1000)
            p, n = statistics.median(plain), statistics.median(times)
            out["plain load in an open tab (reload → first pwa-rendered, median)"] = f"{p:.0f} ms ({' / '.join(f'{x:.0f}' for x in plain)})"
            out["classic navigation→first render (new tab, median)"] = f"{n:.0f} ms ({' / '.join(f'{x:.0f}' for x in times)})"
            top = f"W{args.classic_rounds + 1}"
            out["ratio classic navigation / plain load (bar ≤ 1.5)"] = f"{n / p:.2f}x"
        # Snapshot cost: the pwa-navigate round trip with its screenshot, and the image.
        if "snapshot" in args.only:
            shots = []
            for _ in range(args.rounds * 3):
                t0 = now()
                r = await c.request("session.screenshot", {"session": s})
                shots.append(((now() - t0) * 1000, len(r["data"]) * 3 // 4))
            out["screenshot (median ms, bytes)"] = f"{statistics.median(x[0] for x in shots):.0f} ms, {shots[0][1]} B"
            t0 = now()
            await c.request("webview.click", {"session": s, "webview": top, "selector": "#astro-help"})
            await c.next_event("stack.changed", T, where=lambda p: p["session"] == s and p["cause"] == "pwa-navigate")
            await rendered(c, s, top)
            snap = await c.request("session.get", {"session": s})
            pid = [i["id"] for i in snap["stack"] if i["kind"] == "placeholder"][-1]
            image = await c.request("placeholder.snapshot", {"session": s, "placeholder": pid})
            out["click→pwa-navigate→render incl. snapshot"] = f"{(now() - t0) * 1000:.0f} ms, snapshot {len(image['data']) * 3 // 4} B"
        await c.request("session.close", {"session": s})

        base_pss = 0
        if "memory" in args.only:
            # Memory: PSS of everything below the daemon (Chromium and its children).
            await asyncio.sleep(1.0)
            base_pss = pss_kib(processes_below(d.proc.pid))
            s = (await c.request("session.create", {"url": base + "/app/astro.html", "browser": True}, timeout=T))["session"]
            await rendered(c, s, "W1")
            await asyncio.sleep(1.0)  # what the session sets up in the background is there
            one = pss_kib(processes_below(d.proc.pid))
            for i in range(4):
                await c.request("webview.evaluate", {"session": s, "webview": f"W{i + 1}",
                                                     "expression": "location.href = '/app/astro.html?n=%d'; 1" % i})
                await rendered(c, s, f"W{i + 2}")
            await asyncio.sleep(1.0)
            five = pss_kib(processes_below(d.proc.pid))
            out["Chromium PSS: browser + 1 session (1 tab)"] = f"{one / 1024:.0f} MiB (idle browser {base_pss / 1024:.0f} MiB)"
            out["Chromium PSS per extra tab (same session)"] = f"{(five - one) / 4 / 1024:.1f} MiB"
            await c.request("session.close", {"session": s})

        if "many" in args.only:
            # N sessions × M web views at once.
            await asyncio.sleep(1.0)
            before = renderers(d.proc.pid)

            async def one_session(k):
                s = (await c.request("session.create", {"url": base + "/app/astro.html?s=%d" % k, "browser": True}, timeout=T * 3))["session"]
                await rendered_once(c, s, "W1")
                for i in range(args.webviews - 1):
                    await c.request("webview.evaluate", {"session": s, "webview": f"W{i + 1}",
                                                         "expression": "location.href = '/app/astro.html?n=%d'; 1" % i}, timeout=T * 3)
                    await rendered_once(c, s, f"W{i + 2}")
                got = await c.request("session.get", {"session": s})
                assert ids(got["stack"]) == " ".join(f"W{i + 1}" for i in range(args.webviews)), got
                return s

            t0 = now()
            sessions = await asyncio.gather(*(one_session(k) for k in range(args.sessions)))
            elapsed = now() - t0
            peak_pss = pss_kib(processes_below(d.proc.pid))
            peak = renderers(d.proc.pid)
            for s in sessions:
                await c.request("session.close", {"session": s})
            deadline = now() + 30
            while renderers(d.proc.pid) > before and now() < deadline:
                await asyncio.sleep(0.1)
            after = renderers(d.proc.pid)
            out[f"{args.sessions} sessions × {args.webviews} web views"] = (
                f"{elapsed:.1f} s, stacks checked; renderers {before} → {peak} → {after} after closing; "
                f"PSS {peak_pss / 1024:.0f} MiB ≈ {(peak_pss - base_pss) / args.sessions / 1024:.0f} MiB per session")
            assert after <= before, "a tab was left behind"

        if "seed" in args.only:
            # The seed scenario: harness with its own Chromium and /bridge.js vs a browser session,
            # both with their Chromium running, and both counting their browser's start (the
            # browser session in a fresh daemon: its Chromium starts with the session).
            chromium = find_chromium()
            harness, launches, session_times, cold_times = [], [], [], []
            for _ in range(args.rounds):
                # Each part starts on an idle machine (SETTLE seconds): what the previous part
                # left going (a Chromium exiting, a closed session's renderers, a spare tab being
                # made) would otherwise be counted in the next one.
                await asyncio.sleep(args.settle)
                scenario, launch = await harness_seed(d, chromium)
                harness.append(scenario)
                launches.append(scenario + launch)
                await asyncio.sleep(args.settle)
                t0 = now()
                await browser_seed(c, base)
                session_times.append(now() - t0)
                await asyncio.sleep(args.settle)
                # Counted from the daemon's start: whatever it starts ahead (Chromium) counts.
                t0 = now()
                fresh = conftest.start_daemon("--static", DEMO, *args.daemon_args)
                try:
                    fc = await controller(fresh.ws_url)
                    await browser_seed(fc, fresh.url)
                    cold_times.append(now() - t0)
                    await fc.close()
                finally:
                    fresh.stop()
            h, b = statistics.median(harness), statistics.median(session_times)
            hl, bc = statistics.median(launches), statistics.median(cold_times)
            ms = lambda xs: " / ".join(f"{x * 1000:.0f}" for x in xs)
            out["seed scenario: harness (own Chromium + /bridge.js), Chromium running"] = f"{h * 1000:.0f} ms ({ms(harness)})"
            out["seed scenario: browser session, Chromium running"] = f"{b * 1000:.0f} ms ({ms(session_times)})"
            out["ratio harness / browser session, Chromium running (bar ≥ 1)"] = f"{h / b:.2f}x"
            out["seed scenario: harness counting its Chromium's launch"] = f"{hl * 1000:.0f} ms ({ms(launches)})"
            out["ratio harness counting its launch / browser session, Chromium running (the daemon's, shared)"] = f"{hl / b:.2f}x"
            out["seed scenario: browser session counting its Chromium's start"] = f"{bc * 1000:.0f} ms ({ms(cold_times)})"
            out["ratio harness / browser session, both counting the start (bar ≥ 2)"] = f"{hl / bc:.2f}x"
        await c.close()
    finally:
        d.stop()
    out["load average at the end"] = load()
    print("| what | measured |")
    print("| --- | --- |")
    for k, v in out.items():
        print(f"| {k} | {v} |")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bridged", default=os.path.join(REPO, ".build", "release", "bridged"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--sessions", type=int, default=20)
    p.add_argument("--webviews", type=int, default=5)
    p.add_argument("--classic-rounds", type=int, default=7, help="plain load / classic navigation pairs")
    p.add_argument("--settle", type=float, default=2.0, help="seconds idle before each plain load, classic navigation and seed scenario")
    p.add_argument("--only", default="create,classic,snapshot,memory,many,seed")
    p.add_argument("daemon_args", nargs="*", help="after --: arguments for the daemons")
    a = p.parse_args()
    a.only = set(a.only.split(","))
    os.environ["BRIDGED_BIN"] = os.path.abspath(a.bridged)
    asyncio.run(main(a))
