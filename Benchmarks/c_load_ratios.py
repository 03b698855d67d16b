#!/usr/bin/env python3
"""The daemon's throughput ratios to the raw libwebsockets echo, measured by a generator of
another make: Benchmarks/c-load.c (C, epoll, one process pinned to the other core).

`make bench` measures with bridge-load (Swift). This script runs the same three configurations
with c-load instead, interleaved in rounds like run.py (echo server ping, bridged ping, bridged
navigation, at each page count), and prints the median round of each and the ratios:

    python3 Benchmarks/c_load_ratios.py [--connections 100 1000] [--repeat 3] [--duration 5]
                                        [--bridged .build/release/bridged]

Needs what `make bench` needs (taskset, cc, pkg-config, libwebsockets-dev) and a release build.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench_run  # noqa: E402  (Peer, Bench.build_echo, prefix, wait_for_quiet, machine_info)

ROOT, BENCH = bench_run.ROOT, bench_run.BENCH
C_LOAD = os.path.join(BENCH, ".build", "bench", "c-load")


def build_c_load():
    src = os.path.join(BENCH, "c-load.c")
    os.makedirs(os.path.dirname(C_LOAD), exist_ok=True)
    if os.path.exists(C_LOAD) and os.path.getmtime(C_LOAD) >= os.path.getmtime(src):
        return
    subprocess.run(["cc", "-O2", "-Wall", "-o", C_LOAD, src], check=True)


def one_run(bench, args, peer_name, workload, connections):
    peer = bench.peer(peer_name)
    try:
        idle = bench_run.wait_for_quiet(args.wait_quiet)
        peer.start()
        argv = bench_run.prefix(args.load_cpu, args.nice) + [
            C_LOAD, workload, "--url", f"ws://127.0.0.1:{peer.port}/bridge", "--connections", str(connections),
            "--duration", str(args.duration), "--warmup", str(args.warmup), "--daemon-pid", str(peer.pid),
            "--json", "--label", f"{peer_name}/{workload}/{connections}"]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"c-load exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        result["otherCpuBefore"] = idle
        bench_run.log(f"-- {result['label']}: {result['repliesPerSecond']:.0f} replies/s, "
                      f"peer CPU {result['daemonCpu']}, load CPU {result['loadCpu']}")
        return result
    finally:
        peer.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--connections", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--repeat", type=int, default=3, help="interleaved rounds (the median is reported)")
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--bridged", help="the bridged binary (default .build/release/bridged)")
    ap.add_argument("--daemon-cpu", type=int, default=0)
    ap.add_argument("--load-cpu", type=int, default=1)
    ap.add_argument("--nice", type=int, default=-20 if os.geteuid() == 0 else 0)
    ap.add_argument("--wait-quiet", type=float, default=20.0)
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = max(args.connections) + 200
    if hard != resource.RLIM_INFINITY and hard < need:
        sys.exit(f"c_load_ratios.py: the file descriptor hard limit ({hard}) is below {need}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, need), hard))

    bench = bench_run.Bench(args)
    if not os.path.exists(bench.bridged):
        sys.exit(f"c_load_ratios.py: {bench.bridged} is missing; run `swift build -c release` first")
    bench.build_echo()
    build_c_load()
    bench_run.log(f"machine: {bench_run.machine_info()}")
    rounds = {}
    for _ in range(args.repeat):
        for n in args.connections:
            for peer, workload in (("echo", "echo"), ("bridged", "echo"), ("bridged", "navigation")):
                r = one_run(bench, args, peer, workload, n)
                rounds.setdefault((peer, workload, n), []).append(r["repliesPerSecond"])
    print("| pages | echo server (ping) | bridged ping | bridged navigation | ping ratio | navigation ratio | rounds (echo; ping; navigation) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for n in args.connections:
        e, p, nav = (statistics.median(rounds[(a, b, n)]) for a, b in
                     (("echo", "echo"), ("bridged", "echo"), ("bridged", "navigation")))
        all_rounds = "; ".join(", ".join(f"{v / 1000:.0f}k" for v in rounds[k]) for k in
                               (("echo", "echo", n), ("bridged", "echo", n), ("bridged", "navigation", n)))
        print(f"| {n:,} | {e:,.0f} | {p:,.0f} | {nav:,.0f} | {p / e:.2f}× | {nav / e:.2f}× | {all_rounds} |")


if __name__ == "__main__":
    main()
