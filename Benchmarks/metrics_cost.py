#!/usr/bin/env python3
"""Instructions per navigation reply of bridged binaries under callgrind (user-space instruction
counts, stable on a busy machine): one binary with metrics on and off (`--no-metrics`), or
several binaries (or flag sets) against each other, interleaved.

The workload is bridge-load's `navigation` (docs/PERFORMANCE.md), driven from Python since
the daemon under callgrind is the bottleneck anyway: 100 pages, each looping `--depth 4` steps
deep and back (pwa-navigate → pwa-rendered four times, then back → back event → pwa-rendered
four times), one request in flight per page. Each configuration runs twice: with `--cycles`
cycles, and with none (start, 100 hellos, shutdown); the difference divided by the difference in
replies is the cost of one reply. `--workload ping` measures `ping` → `{}` instead (as many per
page as the navigation workload's replies).

    python3 Benchmarks/metrics_cost.py --bridged .build/release/bridged [--cycles 20]

Two builds against each other (say the commit before a change and after it), each measured
`--rounds` times, the runs interleaved (a, b, a, b, ...) so that whatever else the machine does
weighs on both alike; the first `--run` is the reference:

    python3 Benchmarks/metrics_cost.py --rounds 3 \\
        --run "before=/tmp/before/bridged" --run "after=.build/release/bridged-stripped"

A `--run` is `LABEL=PATH [FLAGS...]` (the flags go to the daemon, e.g. `--no-metrics`). With
`--keep DIR` the callgrind profiles stay in DIR (LABEL-rROUND-cCYCLES.out) and `--symbols N`
prints, for each label, the N functions with the largest marginal inclusive cost per reply
(the cycles profile minus the no-cycles profile, per symbol, from `callgrind_annotate
--inclusive=yes`, demangled by `swift demangle` when it is there).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import tempfile

from websockets.asyncio.client import connect

DEPTH = 4


async def page(url: str, cycles: int, workload: str = "navigation") -> int:
    replies = 0
    async with connect(url, max_size=None, ping_interval=None, open_timeout=120) as ws:
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
        if workload == "ping":
            for _ in range(cycles * 2 * DEPTH):
                await call("ping")
            return replies
        for _ in range(cycles):
            for step in range(DEPTH):
                await call("pwa-navigate", {"url": f"http://127.0.0.1/app/#/{step + 1}"})
                await call("pwa-rendered")
            for _ in range(DEPTH):
                await call("back", wait_event="back")
                await call("pwa-rendered")
    return replies


def run(bridged: str, extra: list[str], pages: int, cycles: int, keep: str | None = None,
        workload: str = "navigation", cache_sim: bool = False) -> tuple[list[int], int]:
    """(events, replies) of one daemon run under callgrind; the profile is moved to `keep`. The
    events are the instructions, and with `cache_sim` callgrind's whole list (Ir Dr Dw I1mr D1mr
    D1mw ILmr DLmr DLmw) with a 512 KiB last level, the size of an L2."""
    out = tempfile.NamedTemporaryFile(prefix="callgrind-", suffix=".out", delete=False).name
    sim = ["--cache-sim=yes", "--LL=524288,8,64"] if cache_sim else []
    proc = subprocess.Popen(["valgrind", "--tool=callgrind", *sim, f"--callgrind-out-file={out}", bridged,
                             "--port", "0", "--log-level", "warning", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    m = re.search(r":(\d+)$", line.strip())
    if not m:
        proc.kill()
        raise RuntimeError(f"{bridged}: no listening line: {line!r} {proc.stderr.read()[-2000:]}")
    port = int(m.group(1))

    async def load():
        counts = await asyncio.gather(*(page(f"ws://127.0.0.1:{port}/bridge", cycles, workload) for _ in range(pages)))
        return sum(counts)

    replies = asyncio.run(load())
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=300)
    m = re.search(r"Collected : ([\d ]+)", err)
    if not m:
        raise RuntimeError(err[-2000:])
    if keep:
        shutil.move(out, keep)
    else:
        os.unlink(out)
    return [int(x) for x in m.group(1).split()], replies


def inclusive(profile: str, event: str = "Ir") -> dict[str, int]:
    """Inclusive instructions (or another `event`) per function of a callgrind profile."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", f"--show={event}", f"--sort={event}", profile],
                          capture_output=True, text=True, check=True).stdout
    costs: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*)$", line)
        if not m or ":" not in m.group(2):
            continue
        name = m.group(2).split(":", 1)[1].split(" [", 1)[0].strip()
        costs[name] = costs.get(name, 0) + int(m.group(1).replace(",", ""))
    return costs


def demangle(names: list[str]) -> list[str]:
    swift = shutil.which("swift")
    if not swift or not names:
        return names
    res = subprocess.run([swift, "demangle", "--simplified", "--compact"], input="\n".join(names),
                         capture_output=True, text=True)
    out = res.stdout.splitlines()
    return out if res.returncode == 0 and len(out) == len(names) else names


def print_symbols(label: str, base: str, loaded: str, replies: int, top: int) -> None:
    a, b = inclusive(base), inclusive(loaded)
    diff = sorted(((b.get(k, 0) - a.get(k, 0)) / replies, k) for k in set(a) | set(b))
    diff = [d for d in reversed(diff) if d[0] >= 1][:top]
    names = demangle([k for _, k in diff])
    print(f"\n{label}: marginal inclusive instructions per reply, by function")
    for (cost, _), name in zip(diff, names):
        print(f"  {cost:10,.0f}  {name[:160]}")


def parse_run(spec: str) -> tuple[str, str, list[str]]:
    words = shlex.split(spec)
    if not words or "=" not in words[0]:
        raise SystemExit(f"--run {spec!r}: expected LABEL=PATH [FLAGS...]")
    label, path = words[0].split("=", 1)
    return label, path, words[1:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bridged", default=".build/release/bridged",
                    help="the binary measured with metrics off and on (without --run)")
    ap.add_argument("--run", action="append", default=[], metavar="LABEL=PATH [FLAGS]",
                    help="a configuration to measure (repeatable; the first is the reference)")
    ap.add_argument("--pages", type=int, default=100)
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--base-cycles", type=int, default=0,
                    help="cycles of the reference run (with 1,000 pages, 2: so that set-up and tear-down cancel)")
    ap.add_argument("--cache-sim", action="store_true",
                    help="also count misses of a simulated 512 KiB last-level cache (--LL=524288,8,64) per reply")
    ap.add_argument("--workload", choices=["navigation", "ping"], default="navigation",
                    help="navigation (above), or ping: as many `ping` requests per page as the navigation's replies")
    ap.add_argument("--rounds", type=int, default=1, help="measurements of each configuration, interleaved")
    ap.add_argument("--keep", metavar="DIR", help="keep the callgrind profiles in DIR")
    ap.add_argument("--symbols", type=int, default=0, metavar="N",
                    help="print the N dearest functions per reply of each configuration (needs --keep)")
    args = ap.parse_args()
    if args.symbols and not args.keep:
        ap.error("--symbols needs --keep DIR")
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)

    if args.run:
        configs = [parse_run(r) for r in args.run]
    else:
        configs = [("metrics off", args.bridged, ["--no-metrics"]), ("metrics on", args.bridged, [])]
    results: dict[str, list[float]] = {label: [] for label, _, _ in configs}
    misses: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in configs}
    last: dict[str, tuple[str, str, int]] = {}
    for r in range(1, args.rounds + 1):
        for label, path, extra in configs:
            stem = os.path.join(args.keep, f"{re.sub(r'[^A-Za-z0-9_.-]', '_', label)}-r{r}") if args.keep else None
            base_keep = f"{stem}-c{args.base_cycles}.out" if stem else None
            keep = f"{stem}-c{args.cycles}.out" if stem else None
            base, base_replies = run(path, extra, args.pages, args.base_cycles, base_keep, args.workload, args.cache_sim)
            ev, replies = run(path, extra, args.pages, args.cycles, keep, args.workload, args.cache_sim)
            ir, base_ir = ev[0], base[0]
            per_reply = (ir - base_ir) / (replies - base_replies)
            results[label].append(per_reply)
            if stem:
                last[label] = (base_keep, keep, replies - base_replies)
            line = (f"{label} (round {r}): {ir:,} - {base_ir:,} instructions over {replies - base_replies:,} replies"
                    f" = {per_reply:,.0f} per reply")
            if args.cache_sim and len(ev) >= 9:
                # Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
                d = [(a - b) / (replies - base_replies) for a, b in zip(ev, base)]
                misses[label].append((d[7], d[8]))
                line += f"; LL data misses per reply {d[7]:.1f} read + {d[8]:.1f} write, L1 data {d[4]:.1f} + {d[5]:.1f}"
            print(line, flush=True)

    print()
    ref_label = configs[0][0]
    ref = statistics.median(results[ref_label])
    for label, _, _ in configs:
        med = statistics.median(results[label])
        spread = f" (runs {', '.join(f'{x:,.0f}' for x in results[label])})" if args.rounds > 1 else ""
        rel = "" if label == ref_label else f", {med - ref:+,.0f} ({(med - ref) / ref * 100:+.2f} %) against {ref_label}"
        print(f"{label}: {med:,.0f} instructions per reply{spread}{rel}")
        if misses[label]:
            rd = statistics.median(m[0] for m in misses[label])
            wr = statistics.median(m[1] for m in misses[label])
            print(f"{label}: {rd:.1f} + {wr:.1f} last-level (512 KiB) data misses per reply (read + write)")
    if not args.run:
        off, on = ref, statistics.median(results["metrics on"])
        print(f"metrics cost {on - off:,.0f} instructions per reply ({(on - off) / off * 100:+.2f} %)")
    if args.symbols:
        for label, (base, loaded, replies) in last.items():
            print_symbols(label, base, loaded, replies, args.symbols)


if __name__ == "__main__":
    main()
