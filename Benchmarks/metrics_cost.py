#!/usr/bin/env python3
"""Instructions per navigation reply of a bridged binary, with metrics on and off (`--no-metrics`),
under callgrind (user-space instruction counts, stable on a busy machine).

The workload is bridge-load's `navigation` (docs/PERFORMANCE.md), driven from Python since
the daemon under callgrind is the bottleneck anyway: 100 pages, each looping `--depth 4` steps
deep and back (pwa-navigate → pwa-rendered four times, then back → back event → pwa-rendered
four times), one request in flight per page. Each configuration runs twice: with `--cycles`
cycles, and with none (start, 100 hellos, shutdown); the difference divided by the difference in
replies is the cost of one reply.

    python3 Benchmarks/metrics_cost.py --bridged .build/release/bridged [--cycles 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import tempfile

from websockets.asyncio.client import connect

DEPTH = 4


async def page(url: str, cycles: int) -> int:
    replies = 0
    async with connect(url, max_size=None) as ws:
        next_id = 1

        async def call(method: str, params: dict | None = None, wait_event: str | None = None):
            nonlocal next_id, replies
            id_ = next_id
            next_id += 1
            await ws.send(json.dumps({"id": id_, "method": method, "params": params or {}}))
            got_reply, got_event = False, wait_event is None
            while not (got_reply and got_event):
                frame = json.loads(await ws.recv())
                if frame.get("id") == id_:
                    if "error" in frame:
                        raise RuntimeError(f"{method}: {frame['error']}")
                    got_reply = True
                elif frame.get("event") == wait_event:
                    got_event = True
            replies += 1

        await call("hello", {"protocol": 1, "role": "page", "url": "http://127.0.0.1/app/"})
        for _ in range(cycles):
            for step in range(DEPTH):
                await call("pwa-navigate", {"url": f"http://127.0.0.1/app/#/{step + 1}"})
                await call("pwa-rendered")
            for _ in range(DEPTH):
                await call("back", wait_event="back")
                await call("pwa-rendered")
    return replies


def run(bridged: str, extra: list[str], pages: int, cycles: int) -> tuple[int, int]:
    """(instructions, replies) of one daemon run under callgrind."""
    out = tempfile.NamedTemporaryFile(prefix="callgrind-", suffix=".out", delete=False).name
    proc = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", bridged,
                             "--port", "0", "--log-level", "warning", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    port = int(re.search(r":(\d+)$", line.strip()).group(1))

    async def load():
        counts = await asyncio.gather(*(page(f"ws://127.0.0.1:{port}/bridge", cycles) for _ in range(pages)))
        return sum(counts)

    replies = asyncio.run(load())
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=300)
    m = re.search(r"Collected : (\d+)", err)
    if not m:
        raise RuntimeError(err[-2000:])
    os.unlink(out)
    return int(m.group(1)), replies


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bridged", default=".build/release/bridged")
    ap.add_argument("--pages", type=int, default=100)
    ap.add_argument("--cycles", type=int, default=20)
    args = ap.parse_args()
    results = {}
    for label, extra in (("metrics off", ["--no-metrics"]), ("metrics on", [])):
        base_ir, base_replies = run(args.bridged, extra, args.pages, 0)
        ir, replies = run(args.bridged, extra, args.pages, args.cycles)
        per_reply = (ir - base_ir) / (replies - base_replies)
        results[label] = per_reply
        print(f"{label}: {ir:,} - {base_ir:,} instructions over {replies - base_replies:,} replies = {per_reply:,.0f} per reply")
    off, on = results["metrics off"], results["metrics on"]
    print(f"metrics cost {on - off:,.0f} instructions per reply ({(on - off) / off * 100:+.2f} %)")


if __name__ == "__main__":
    main()
