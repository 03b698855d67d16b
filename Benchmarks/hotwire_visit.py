#!/usr/bin/env python3
"""The cost of a Turbo visit through a hotwire-native session (docs/PERFORMANCE.md, "Hotwire
Native visits").

    python3 Benchmarks/hotwire_visit.py [--bridged .build/release/bridged] [--visits 60] [--platform ios]

One daemon, one Chromium, the test app (Tests/integration/hotwire_app, Turbo 7.1.0). Two
sessions on the same app: a plain browser session (Turbo's own browser adapter: the visit is
the page's alone) and a hotwire-native one (the proposal goes to bridged, which decides and
sends the visit back). The same visits alternate between /one and /two:

- plain: `Turbo.visit(url)` until `turbo:render` (the new page is in the document: where the
  native adapter's `visitRendered` is called) and two animation frames, timed in the page;
- hotwire: `Turbo.visit(url)` (a proposal) until the controller receives `visitRendered`
  (posted after two animation frames), timed at the controller from its `visitProposed`
  (both ends carry the same page → daemon → controller hop).

Prints p50 / p90 of each and the difference of the p50s.
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
sys.path.insert(0, os.path.join(REPO, "Tests", "integration", "hotwire_app"))

from bridgeclient import controller  # noqa: E402
import conftest  # noqa: E402
import server as hotwire_app  # noqa: E402

T = 60

PLAIN_VISIT = """new Promise((resolve) => {
  const t0 = performance.now();
  document.addEventListener("turbo:render", () =>
    requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - t0))), { once: true });
  Turbo.visit(%r);
})"""


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


async def measure(d, base, visits, platform):
    c = await controller(d.ws_url)
    plain = (await c.request("session.create", {"url": base + "/", "browser": True}, timeout=T))["session"]
    await c.next_event("page.connected", T, where=lambda p: p["session"] == plain)
    hot = (await c.request("session.create", {
        "url": base + "/", "browser": True, "profile": "hotwire-native", "platform": platform,
        "pathConfiguration": hotwire_app.PATH_CONFIGURATION}, timeout=T))["session"]
    await c.next_event("hotwire.message", T, where=lambda p: p["session"] == hot and p["name"] == "pageLoaded")

    async def ev(s, expression):
        return (await c.request("webview.evaluate", {"session": s, "webview": "W1", "expression": expression}, timeout=T))["value"]

    await ev(plain, "new Promise(r => { const t = () => window.Turbo ? r(true) : setTimeout(t, 10); t(); })")
    plain_ms, hot_ms = [], []
    for i in range(visits + 5):  # the first 5 warm up
        url = base + ("/one" if i % 2 == 0 else "/two")
        ms = await ev(plain, PLAIN_VISIT % url)
        await ev(hot, f"Turbo.visit({url!r}); true")
        await c.next_event("hotwire.message", T, where=lambda p: p["session"] == hot and p["name"] == "visitProposed")
        t0 = time.perf_counter()
        await c.next_event("hotwire.message", T, where=lambda p: p["session"] == hot and p["name"] == "visitRendered")
        t1 = time.perf_counter()
        if i >= 5:
            plain_ms.append(ms)
            hot_ms.append((t1 - t0) * 1000)
        # keep the hotwire stack short: back to the root every few visits
        if i % 10 == 9:
            while (await c.request("navigation.back", {"session": hot}))["action"] == "pop":
                await c.next_event("hotwire.message", T, where=lambda p: p["session"] == hot and p["name"] == "visitRendered")
    await c.close()
    return plain_ms, hot_ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bridged", default=os.path.join(REPO, ".build", "release", "bridged"))
    ap.add_argument("--visits", type=int, default=60)
    ap.add_argument("--platform", default="ios", choices=["ios", "android"])
    args = ap.parse_args()
    os.environ["BRIDGED_BIN"] = os.path.abspath(args.bridged)
    server, base = hotwire_app.start()
    d = conftest.start_daemon()
    try:
        plain_ms, hot_ms = asyncio.run(measure(d, base, args.visits, args.platform))
    finally:
        d.stop_if_running()
        server.shutdown()
    p50p, p50h = statistics.median(plain_ms), statistics.median(hot_ms)
    print(f"visits: {len(plain_ms)} each, platform {args.platform}")
    print(f"plain tab (Turbo's adapter)     p50 {p50p:7.2f} ms  p90 {pct(plain_ms, 90):7.2f} ms")
    print(f"hotwire-native (bridged decides) p50 {p50h:7.2f} ms  p90 {pct(hot_ms, 90):7.2f} ms")
    print(f"difference of the p50s           {p50h - p50p:+7.2f} ms")


if __name__ == "__main__":
    main()
