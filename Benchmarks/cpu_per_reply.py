#!/usr/bin/env python3
"""Peer CPU per reply: the raw libwebsockets echo server and bridged builds (ping and
navigation), for machines too busy for `make bench`'s replies per second.

Each run starts a fresh peer pinned to CPU 0 (niceness -20 as root), drives it with bridge-load
on CPU 1 with no warm-up, and reads the peer's CPU time (all threads, /proc/PID/task/*/schedstat)
before and after; a second run of 0.1 s that mostly connects is subtracted, and the difference
is divided by the difference in replies. Peers and workloads are interleaved round by round; the
median is reported, with echo ÷ bridged (on a machine where each peer has a core of its own this
approaches the replies/s ratio of `make bench`). Under heavy load from other work the figures
are inflated by cache and sibling-thread contention: compare builds only within one run.

    make bench-build
    python3 Benchmarks/cpu_per_reply.py --bridged /tmp/before/bridged .build/release/bridged [--rounds 3]
"""

import argparse
import glob
import json
import os
import re
import statistics
import subprocess

BENCH = os.path.dirname(os.path.abspath(__file__))
LOAD = os.path.join(BENCH, ".build", "release", "bridge-load")
ECHO = os.path.join(BENCH, ".build", "bench", "echo-server")


def cpu_us(pid: int) -> float:
    total = 0
    for f in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            total += int(open(f).read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e3


def prefix(cpu: int) -> list[str]:
    return ["taskset", "-c", str(cpu)] + (["nice", "-n", "-20"] if os.geteuid() == 0 else [])


def run(peer: str, workload: str, pages: int, seconds: float) -> tuple[float, int]:
    """(peer CPU in µs, replies) of one run against a fresh peer."""
    argv = [ECHO, "0"] if peer == "echo" else [peer, "--port", "0", "--log-level", "error", "--max-sessions", "20000"]
    proc = subprocess.Popen(prefix(0) + argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        m = re.search(r":(\d+)\s*$", proc.stdout.readline())
        if not m:
            raise RuntimeError(f"{peer}: no listening line")
        before = cpu_us(proc.pid)
        out = subprocess.run(prefix(1) + [LOAD, workload, "--url", f"ws://127.0.0.1:{m.group(1)}/bridge",
                                          "--connections", str(pages), "--duration", str(seconds), "--warmup", "0",
                                          "--json"], capture_output=True, text=True, timeout=seconds + 120)
        after = cpu_us(proc.pid)
        return after - before, json.loads(out.stdout.strip().splitlines()[-1])["replies"]
    finally:
        proc.terminate()
        proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bridged", nargs="+", required=True, help="bridged binaries to compare")
    ap.add_argument("--pages", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if not os.path.exists(LOAD):
        raise SystemExit(f"{LOAD} is missing: run `make bench-build`")
    if not os.path.exists(ECHO):
        os.makedirs(os.path.dirname(ECHO), exist_ok=True)
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libwebsockets"], capture_output=True,
                               text=True, check=True).stdout.split()
        subprocess.run(["cc", "-O2", "-o", ECHO, os.path.join(BENCH, "echo-server.c")] + flags, check=True)

    configs = [("echo", "echo")] + [(b, w) for b in args.bridged for w in ("echo", "navigation")]
    results: dict[tuple[str, str, int], list[float]] = {}
    for r in range(args.rounds):
        for pages in args.pages:
            for peer, workload in configs:
                setup_cpu, setup_replies = run(peer, workload, pages, 0.1)
                cpu, replies = run(peer, workload, pages, args.seconds)
                per = (cpu - setup_cpu) / (replies - setup_replies)
                results.setdefault((peer, workload, pages), []).append(per)
                print(f"round {r + 1}: {peer} {workload} {pages} pages: {per:.2f} µs/reply", flush=True)
    print()
    for pages in args.pages:
        echo = statistics.median(results[("echo", "echo", pages)])
        print(f"{pages} pages: echo {echo:.2f} µs per reply")
        for b in args.bridged:
            for workload, label in (("echo", "ping"), ("navigation", "navigation")):
                runs = results[(b, workload, pages)]
                med = statistics.median(runs)
                print(f"  {b} {label}: {med:.2f} µs per reply, echo ÷ bridged {echo / med:.2f}x "
                      f"(runs {', '.join(f'{x:.2f}' for x in runs)})")


if __name__ == "__main__":
    main()
