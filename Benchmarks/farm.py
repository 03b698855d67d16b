#!/usr/bin/env python3
"""The proxy's cost: the navigation workload through nginx in front of two daemons, against one
daemon reached directly.

    python3 Benchmarks/farm.py [--connections 100] [--duration 5] [--rounds 3] [--rate 4000]

Both sides run the release `bridged` (`--bridged`, default .build/release/bridged) and are driven
by `bridge-load` (`--bridge-load`, default: the first of .build/release/bridge-load and
Benchmarks/.build/release/bridge-load). nginx runs deploy/nginx.conf as shipped with the
addresses changed and the third daemon left out. The daemons are pinned to --daemon-cpu,
bridge-load to --load-cpu; nginx's workers are not pinned (on a 2-core machine they share the
cores with everyone: that is the cost being measured).

For each side: closed-loop (as fast as replies come) replies/s and p99, then a fixed-rate run
(--rate requests/s, open loop) for its p99. Each configuration runs --rounds times; the median
round is reported. Prints a Markdown table and writes Benchmarks/results/farm.json.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pinned(cpu, argv):
    return (["taskset", "-c", str(cpu)] if cpu is not None and shutil.which("taskset") else []) + argv


class Daemon:
    def __init__(self, binary, cpu, *args):
        self.proc = subprocess.Popen(pinned(cpu, [binary, "--port", "0", "--log-level", "error",
                                                  "--max-sessions", "20000", *args]),
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        line = self.proc.stdout.readline().decode()
        m = re.match(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if not m:
            self.stop()
            raise RuntimeError(f"bridged did not start: {line!r}")
        self.port = int(m.group(1))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def render_nginx(listen, ports, tmp):
    """deploy/nginx.conf for daemons a and b only, on the given ports."""
    text = open(os.path.join(ROOT, "deploy", "nginx.conf")).read()
    text = re.sub(r'\s*"~\^s-c-"\s+daemon_c;', "", text)
    text = re.sub(r"\s*upstream daemon_c \{[^}]*\}", "", text)
    text = re.sub(r"\n\s*server 127\.0\.0\.1:8703[^\n]*", "", text)
    for old, new in zip((8701, 8702), ports):
        text = text.replace(f"127.0.0.1:{old}", f"127.0.0.1:{new}")
    text = text.replace("listen 8787;", f"listen 127.0.0.1:{listen};")
    temp = "".join(f"    {k}_temp_path {tmp}/{k};\n" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return text.replace("http {\n", "http {\n" + temp, 1)


class Nginx:
    def __init__(self, ports):
        self.tmp = tempfile.mkdtemp(prefix="bridged-bench-nginx-")
        os.chmod(self.tmp, 0o755)
        self.port = free_port()
        conf = os.path.join(self.tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write(render_nginx(self.port, ports, self.tmp))
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.proc = subprocess.Popen([nginx, "-p", self.tmp, "-c", conf, "-e", f"{self.tmp}/error.log",
                                      "-g", f"daemon off; pid {self.tmp}/nginx.pid; error_log {self.tmp}/error.log;"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("nginx did not start; see " + self.tmp)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def load(args, url, extra=()):
    argv = pinned(args.load_cpu, [args.bridge_load, "navigation", "--url", url, "--connections", str(args.connections),
                                  "--duration", str(args.duration), "--warmup", str(args.warmup), "--json", *extra])
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"bridge-load exited {proc.returncode}: {proc.stderr[-500:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    bad = {k: result[k] for k in ("connectFailures", "failedConnections", "errorReplies", "orderViolations") if result.get(k)}
    if bad:
        raise RuntimeError(f"bridge-load saw problems: {bad}")
    return result


def one_round(args, side):
    daemons = []
    proxy = None
    try:
        if side == "direct":
            daemons.append(Daemon(args.bridged, args.daemon_cpu))
            url = f"ws://127.0.0.1:{daemons[0].port}/bridge"
        else:
            for name in ("a", "b"):
                daemons.append(Daemon(args.bridged, args.daemon_cpu, "--instance", name))
            proxy = Nginx([d.port for d in daemons])
            url = f"ws://127.0.0.1:{proxy.port}/bridge"
        closed = load(args, url)
        fixed = load(args, url, ("--rate", str(args.rate))) if args.rate else None
        return {
            "repliesPerSecond": closed["repliesPerSecond"],
            "p99ms": closed["latencyMs"]["p99"],
            "p50ms": closed["latencyMs"]["p50"],
            "fixedRateP99ms": fixed["latencyMs"]["p99"] if fixed else None,
            "fixedRateP50ms": fixed["latencyMs"]["p50"] if fixed else None,
        }
    finally:
        if proxy:
            proxy.stop()
        for d in daemons:
            d.stop()


def median(rounds, key):
    values = sorted(r[key] for r in rounds if r.get(key) is not None)
    return values[(len(values) - 1) // 2] if values else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bridged", default=os.path.join(ROOT, ".build", "release", "bridged"))
    ap.add_argument("--bridge-load", default=None)
    ap.add_argument("--connections", type=int, default=100)
    ap.add_argument("--duration", type=float, default=5)
    ap.add_argument("--warmup", type=float, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rate", type=int, default=4000, help="requests/s of the fixed-rate run (0: none)")
    ap.add_argument("--daemon-cpu", type=int, default=0)
    ap.add_argument("--load-cpu", type=int, default=1)
    args = ap.parse_args()
    if args.bridge_load is None:
        for candidate in (os.path.join(ROOT, ".build", "release", "bridge-load"),
                          os.path.join(ROOT, "Benchmarks", ".build", "release", "bridge-load")):
            if os.access(candidate, os.X_OK):
                args.bridge_load = candidate
                break
        else:
            sys.exit("no bridge-load binary: build it (swift build -c release --product bridge-load) or pass --bridge-load")
    for tool in (args.bridged, args.bridge_load):
        if not os.access(tool, os.X_OK):
            sys.exit(f"{tool} is not an executable")
    if not (shutil.which("nginx") or os.path.exists("/usr/sbin/nginx")):
        sys.exit("nginx is not installed (scripts/install-deps.sh --test installs it)")

    rounds = {"direct": [], "nginx": []}
    for n in range(args.rounds):
        for side in ("direct", "nginx"):  # interleaved, so a busy moment hits both sides
            r = one_round(args, side)
            log(f"round {n + 1} {side}: {r}")
            rounds[side].append(r)
    summary = {side: {k: median(rs, k) for k in rs[0]} for side, rs in rounds.items()}
    d, p = summary["direct"], summary["nginx"]

    def ratio(a, b):
        return None if not a or not b else a / b

    table = [
        "| navigation, %d pages | one daemon, direct | nginx + 2 daemons | ratio |" % args.connections,
        "| --- | ---: | ---: | ---: |",
        f"| replies/s (closed loop) | {d['repliesPerSecond']:,.0f} | {p['repliesPerSecond']:,.0f} | {ratio(p['repliesPerSecond'], d['repliesPerSecond']):.2f}x |",
        f"| p50 ms (closed loop) | {d['p50ms']:.2f} | {p['p50ms']:.2f} | {ratio(p['p50ms'], d['p50ms']):.2f}x |",
        f"| p99 ms (closed loop) | {d['p99ms']:.2f} | {p['p99ms']:.2f} | {ratio(p['p99ms'], d['p99ms']):.2f}x |",
    ]
    if args.rate:
        table += [
            f"| p50 ms at {args.rate:,}/s | {d['fixedRateP50ms']:.2f} | {p['fixedRateP50ms']:.2f} | {ratio(p['fixedRateP50ms'], d['fixedRateP50ms']):.2f}x |",
            f"| p99 ms at {args.rate:,}/s | {d['fixedRateP99ms']:.2f} | {p['fixedRateP99ms']:.2f} | {ratio(p['fixedRateP99ms'], d['fixedRateP99ms']):.2f}x |",
        ]
    print("\n".join(table))
    os.makedirs(os.path.join(ROOT, "Benchmarks", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "Benchmarks", "results", "farm.json"), "w") as f:
        json.dump({"args": vars(args), "rounds": rounds, "median": summary}, f, indent=2)


if __name__ == "__main__":
    main()
