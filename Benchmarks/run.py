#!/usr/bin/env python3
"""`make bench`: every workload against bridged and its peers, in one run, and the table.

Peers, each started fresh for every workload and pinned to one core (--daemon-cpu, default 0)
while bridge-load runs on the other (--load-cpu, default 1):
  bridged      the release daemon (.build/release/bridged)
  echo         Benchmarks/echo-server.c: a minimal libwebsockets echo server (the transport's limit)
  python       Benchmarks/mock_peer.py: the navigation workload mocked with Python `websockets`

Workloads (see `bridge-load --help`): echo-equivalent (ping) and navigation at 100 and 1,000
pages, latency at a fixed rate, 10,000 idle pages (memory, connect time), 10,000 pending
foreground timers. Prints a Markdown report on stdout and writes it, with every raw result, to
Benchmarks/results/latest.{md,json}. Everything is bounded in time; nothing is left running.
"""
import argparse
import datetime
import json
import os
import platform
import resource
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "Benchmarks")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def sh(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except Exception:
        return ""


# ---------------------------------------------------------------------------------------------
# The machine

def machine_info():
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) // 1024} MiB"
    except OSError:
        pass
    try:
        import websockets
        ws_version = websockets.__version__
    except Exception:
        ws_version = "?"
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "memory": mem,
        "kernel": platform.release(),
        "swift": sh(["swift", "--version"]).splitlines()[0] if sh(["swift", "--version"]) else "?",
        "libwebsockets": sh(["pkg-config", "--modversion", "libwebsockets"]),
        "python": platform.python_version(),
        "websockets": ws_version,
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
    }


# ---------------------------------------------------------------------------------------------
# Peers

def machine_busy():
    """Busy CPU seconds of the whole machine since boot (all CPUs)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def wait_for_quiet(limit_s, threshold=0.15):
    """Waits (up to limit_s) until the machine is idle, so other work does not skew a run.
    Returns the busy cores seen last."""
    deadline = time.time() + limit_s
    while True:
        b0, t0 = machine_busy(), time.time()
        time.sleep(0.5)
        busy = (machine_busy() - b0) / (time.time() - t0)
        if busy <= threshold or time.time() >= deadline:
            return busy


def prefix(cpu, nice):
    argv = ["taskset", "-c", str(cpu)]
    if nice:
        argv = ["nice", "-n", str(nice)] + argv
    return argv


class Peer:
    def __init__(self, name, argv, cpu, nice):
        self.name = name
        self.argv = prefix(cpu, nice) + argv
        self.proc = None
        self.port = None
        self.log_path = os.path.join(ROOT, ".build", "bench", f"{name}.log")

    def start(self):
        os.makedirs(os.path.dirname(self.log_path), exist_ok=True)
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=self.log, cwd=ROOT)
        deadline = time.time() + 30
        line = b""
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            if line.startswith(b"listening on http://"):
                self.port = int(line.strip().rsplit(b":", 1)[1])
                return
        self.stop()
        raise RuntimeError(f"{self.name} did not start (see {self.log_path}): {line!r}")

    @property
    def pid(self):
        return self.proc.pid

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.log.close()
        self.proc = None


class Bench:
    def __init__(self, args):
        self.args = args
        self.results = []
        self.bridged = args.bridged or os.path.join(ROOT, ".build", "release", "bridged")
        self.load = os.path.join(BENCH, ".build", "release", "bridge-load")  # the Benchmarks package
        self.echo = os.path.join(BENCH, ".build", "bench", "echo-server")

    def summary(self):
        """One result per configuration: the median round (by replies/s, or by p99 for runs at a
        fixed rate), carrying every round's value in `rounds`."""
        keys = []
        for r in self.results:
            if r["key"] not in keys:
                keys.append(r["key"])
        out = {}
        for key in keys:
            runs = [r for r in self.results if r["key"] == key]
            ok = [r for r in runs if "failed" not in r]
            if not ok:
                out[key] = runs[-1]
                continue
            fixed_rate = "targetRate" in ok[0]
            metric = (lambda r: r.get("latencyMs", {}).get("p99", 0)) if fixed_rate else (lambda r: r.get("repliesPerSecond") or 0)
            ranked = sorted(ok, key=metric)
            pick = dict(ranked[(len(ranked) - 1) // 2])
            pick["rounds"] = [metric(r) for r in ok]
            out[key] = pick
        return out

    def build_echo(self):
        src = os.path.join(BENCH, "echo-server.c")
        os.makedirs(os.path.dirname(self.echo), exist_ok=True)
        if os.path.exists(self.echo) and os.path.getmtime(self.echo) >= os.path.getmtime(src):
            return
        flags = sh(["pkg-config", "--cflags", "--libs", "libwebsockets"]).split()
        cmd = ["cc", "-O2", "-Wall", "-o", self.echo, src] + flags
        log("building the echo peer: " + " ".join(cmd))
        subprocess.run(cmd, check=True)

    def peer(self, name, timeout_ms=1000):
        cpu = self.args.daemon_cpu
        if name == "bridged":
            argv = [self.bridged, "--port", "0", "--log-level", "error", "--max-sessions", "20000",
                    "--foreground-timeout-ms", str(timeout_ms)]
        elif name == "echo":
            argv = [self.echo, "0"]
        elif name == "python":
            argv = [sys.executable, os.path.join(BENCH, "mock_peer.py"), "--port", "0",
                    "--foreground-timeout-ms", str(timeout_ms)]
        else:
            raise ValueError(name)
        return Peer(name, argv, cpu, self.args.nice)

    def run(self, peer_name, workload, connections, extra=(), key=None, timeout_ms=1000):
        """Starts a fresh peer, runs one bridge-load workload against it, stops the peer."""
        key = key or f"{peer_name}/{workload}/{connections}"
        peer = self.peer(peer_name, timeout_ms)
        result = {"key": key, "peer": peer_name, "workload": workload, "connections": connections}
        try:
            idle = wait_for_quiet(self.args.wait_quiet)
            if idle > 0.15:
                log(f"   the machine is busy ({idle:.2f} cores) before {key}; running anyway")
            peer.start()
            argv = prefix(self.args.load_cpu, self.args.nice) + [self.load, workload,
                    "--url", f"ws://127.0.0.1:{peer.port}/bridge", "--connections", str(connections),
                    "--daemon-pid", str(peer.pid), "--json", "--label", key] + list(extra)
            if workload in ("navigation", "echo"):
                argv += ["--duration", str(self.args.duration), "--warmup", str(self.args.warmup)]
            log(f"-- {key}: {' '.join(argv)}")
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
            if proc.returncode != 0:
                raise RuntimeError(f"bridge-load exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
            result.update(json.loads(proc.stdout.strip().splitlines()[-1]))
            bad = [k for k in ("connectFailures", "failedConnections", "errorReplies", "orderViolations") if result.get(k)]
            if bad:
                result["problems"] = ", ".join(f"{k}={result[k]}" for k in bad)
                log(f"   problems: {result['problems']} {result.get('firstError', '')} {result.get('firstFailure', '')}")
        except Exception as e:  # one failed run must not hide the others
            result["failed"] = str(e)
            log(f"   FAILED: {e}")
        finally:
            peer.stop()
        result["round"] = sum(1 for r in self.results if r["key"] == key)
        self.results.append(result)
        summary = {k: result.get(k) for k in ("repliesPerSecond", "daemonCpu", "loadCpu", "otherCpu",
                                              "rssPerConnectionKiB", "connectSeconds", "daemonLatenessMs")
                   if k in result}
        if "latencyMs" in result:
            summary["p99ms"] = result["latencyMs"]["p99"]
        log(f"   {summary}")
        return result


# ---------------------------------------------------------------------------------------------
# The report

def fmt_int(v):
    return "—" if v is None else f"{v:,.0f}"


def fmt_ms(v):
    return "—" if v is None else (f"{v:.3f}" if v < 10 else f"{v:.1f}")


def ratio(a, b):
    if not a or not b:
        return None
    return a / b


def fmt_ratio(r):
    return "—" if r is None else f"{r:.2f}×"


def rounds_text(r):
    rounds = r.get("rounds") or []
    if len(rounds) < 2:
        return ""
    if "targetRate" in r:
        return "p99 " + ", ".join(f"{v:.2f}" for v in rounds)
    return ", ".join(f"{v / 1000:.0f}k" for v in rounds)


def report(bench, info, args):
    by = bench.summary()

    def val(key, field, sub=None):
        r = by.get(key)
        if not r or "failed" in r:
            return None
        v = r.get(field)
        if sub is not None and isinstance(v, dict):
            v = v.get(sub)
        return v

    out = []
    out.append(f"### Run of {info['date']}")
    out.append("")
    out.append(f"Machine: {info['cpu']}, {info['cores']} cores, {info['memory']}, Linux {info['kernel']}; "
               f"{info['swift']}; libwebsockets {info['libwebsockets']}; Python {info['python']}, "
               f"websockets {info['websockets']}. Peer pinned to CPU {args.daemon_cpu}, bridge-load to CPU "
               f"{args.load_cpu}; {args.duration:g} s measured after {args.warmup:g} s warm-up per run, "
               f"median of {args.repeat} rounds for bridged and the echo server (1 for the Python mock); "
               f"one request outstanding per page; niceness {args.nice}.")
    out.append("")
    out.append("**Throughput** (replies per second; ratios are bridged ÷ peer):")
    out.append("")
    out.append("| workload | pages | bridged | raw lws echo | Python mock | bridged ÷ echo | bridged ÷ mock |")
    out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in args.connections:
        echo = val(f"echo/echo/{n}", "repliesPerSecond")
        for wl, label in (("echo", "ping (echo-equivalent)"), ("navigation", "navigation")):
            b = val(f"bridged/{wl}/{n}", "repliesPerSecond")
            py = val(f"python/{wl}/{n}", "repliesPerSecond")
            out.append(f"| {label} | {n:,} | {fmt_int(b)} | {fmt_int(echo)} | {fmt_int(py)} | "
                       f"{fmt_ratio(ratio(b, echo))} | {fmt_ratio(ratio(b, py))} |")
    out.append("")
    out.append("Navigation counts every request (pwa-navigate, pwa-rendered, back); a navigation "
               "is one pwa-navigate (+ its pwa-rendered) — navigations/s is about a quarter of replies/s.")
    out.append("")
    out.append("**Latency and CPU** of those runs (ms from send to reply; CPU in cores, `other` = "
               "CPU used by anything else on the machine during the run):")
    out.append("")
    out.append("| peer | workload | pages | replies/s | navigations/s | p50 | p99 | p99.9 | peer CPU | load CPU | other | all rounds |")
    out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in by.values():
        if r["workload"] not in ("navigation", "echo") or "failed" in r:
            continue
        lat = r.get("latencyMs", {})
        navs = r.get("navigationsPerSecond") if r["workload"] == "navigation" else None
        rate = f" @ {fmt_int(r['targetRate'])}/s" if r.get("targetRate") else ""
        out.append(f"| {r['peer']} | {r['workload']}{rate} | {r['connections']:,} | {fmt_int(r.get('repliesPerSecond'))} | "
                   f"{fmt_int(navs)} | {fmt_ms(lat.get('p50'))} | {fmt_ms(lat.get('p99'))} | {fmt_ms(lat.get('p999'))} | "
                   f"{r.get('daemonCpu', 0):.2f} | {r.get('loadCpu', 0):.2f} | {r.get('otherCpu', 0):.2f} | "
                   f"{rounds_text(r)} |")
    out.append("")
    has = lambda wl: any(r["workload"] == wl for r in by.values())
    if not has("scale"):
        pass
    else:
        out += scale_section(bench, by, args)
    if has("timers"):
        out += timers_section(bench, by, args)
    out += targets_section(bench, by, args, val)
    return "\n".join(out)


def scale_section(bench, by, args):
    out = []
    out.append(f"**Idle pages** ({args.scale_connections:,} connected pages, each after `hello`):")
    out.append("")
    out.append("| peer | connect all | connects/s | RSS per page | then one ping each: p50 / p99 | bridged ÷ peer (memory) |")
    out.append("| --- | ---: | ---: | ---: | ---: | ---: |")
    b = by.get(f"bridged/scale/{args.scale_connections}") or {}
    bmem = None if "failed" in b else b.get("rssPerConnectionKiB")
    for p in ("bridged", "echo", "python"):
        r = by.get(f"{p}/scale/{args.scale_connections}")
        if not r:
            continue
        if "failed" in r:
            out.append(f"| {p} | failed | | | | |")
            continue
        pl = r.get("pingLatencyMs", {})
        mem = r.get("rssPerConnectionKiB")
        out.append(f"| {p} | {r.get('connectSeconds', 0):.2f} s | {fmt_int(r.get('connectsPerSecond'))} | "
                   f"{mem:.1f} KiB | {fmt_ms(pl.get('p50'))} / {fmt_ms(pl.get('p99'))} ms | {fmt_ratio(ratio(bmem, mem))} |")
    out.append("")
    return out


def timers_section(bench, by, args):
    out = []
    out.append(f"**Foreground timers** ({args.timer_connections:,} pending at once, {args.timer_timeout_ms} ms "
               f"timeout, started over {args.timer_spread:g} s; lateness = latencyMs − timeout as the peer "
               f"reports it, whole ms; observed = from sending pwa-navigate to the controller receiving "
               f"foreground.removed, minus the timeout):")
    out.append("")
    out.append("| peer | pending peak | fired | lateness p50 / p99 / max | observed p50 / p99 / max |")
    out.append("| --- | ---: | ---: | ---: | ---: |")
    for p in ("bridged", "python"):
        r = by.get(f"{p}/timers/{args.timer_connections}")
        if not r:
            continue
        if "failed" in r:
            out.append(f"| {p} | failed | | | |")
            continue
        d, o = r.get("daemonLatenessMs", {}), r.get("observedLatenessMs", {})
        out.append(f"| {p} | {fmt_int(r.get('pendingPeak'))} | {fmt_int(r.get('timedOut'))} | "
                   f"{d.get('p50', 0):g} / {d.get('p99', 0):g} / {d.get('max', 0):g} ms | "
                   f"{o.get('p50', 0):.1f} / {o.get('p99', 0):.1f} / {o.get('max', 0):.1f} ms |")
    out.append("")
    return out


def targets_section(bench, by, args, val):
    out = []
    bmem = val(f"bridged/scale/{args.scale_connections}", "rssPerConnectionKiB")
    echo100 = val("echo/echo/100", "repliesPerSecond")
    nav100 = val("bridged/navigation/100", "repliesPerSecond")
    ping100 = val("bridged/echo/100", "repliesPerSecond")
    py100 = val("python/navigation/100", "repliesPerSecond")
    rate_key = "bridged/navigation/100@rate"
    rate_p99 = val(rate_key, "latencyMs", "p99")
    rate = val(rate_key, "targetRate")
    lateness_p99 = val(f"bridged/timers/{args.timer_connections}", "daemonLatenessMs", "p99")

    def check(name, ok, detail):
        mark = "met" if ok else ("**missed**" if ok is not None else "not measured")
        out.append(f"| {name} | {detail} | {mark} |")

    out.append("**Targets**:")
    out.append("")
    out.append("| target | measured | |")
    out.append("| --- | --- | --- |")
    r1 = ratio(nav100, echo100)
    check("navigation, 100 pages ≥ 0.6× raw echo", None if r1 is None else r1 >= 0.6,
          "—" if r1 is None else f"{fmt_int(nav100)} vs {fmt_int(echo100)} replies/s = {r1:.2f}×")
    check("p99 ≤ 2 ms at half that rate", None if rate_p99 is None else rate_p99 <= 2.0,
          "—" if rate_p99 is None else f"p99 {rate_p99:.3f} ms at {fmt_int(rate)} replies/s")
    r2 = ratio(ping100, echo100)
    check("echo-equivalent ≥ 0.8× raw echo", None if r2 is None else r2 >= 0.8,
          "—" if r2 is None else f"{fmt_int(ping100)} vs {fmt_int(echo100)} = {r2:.2f}×")
    r3 = ratio(nav100, py100)
    check("navigation ≥ 10× Python mock", None if r3 is None else r3 >= 10,
          "—" if r3 is None else f"{fmt_int(nav100)} vs {fmt_int(py100)} = {r3:.1f}×")
    check(f"≤ 20 KiB per idle page at {args.scale_connections:,}", None if bmem is None else bmem <= 20,
          "—" if bmem is None else f"{bmem:.1f} KiB")
    check(f"timer lateness p99 ≤ 5 ms, {args.timer_connections:,} pending",
          None if lateness_p99 is None else lateness_p99 <= 5,
          "—" if lateness_p99 is None else f"p99 {lateness_p99:g} ms")
    out.append("")
    failed = [r["key"] + ": " + r["failed"] for r in bench.results if "failed" in r]
    problems = [r["key"] + ": " + r["problems"] for r in bench.results if "problems" in r]
    noisy = sorted({r["key"] for r in bench.results if r.get("otherCpu", 0) > 0.15})
    if failed or problems or noisy:
        out.append("Warnings:")
        for f in failed:
            out.append(f"- failed: {f}")
        for p in problems:
            out.append(f"- {p}")
        if noisy:
            out.append(f"- other processes used > 0.15 cores during: {', '.join(noisy)} (numbers are noisy)")
        out.append("")
    return out


def main():
    ap = argparse.ArgumentParser(description="Run every bridged workload and peer; print the table.")
    ap.add_argument("--duration", type=float, default=5.0, help="measured seconds per throughput run")
    ap.add_argument("--warmup", type=float, default=1.0, help="warm-up seconds per throughput run")
    ap.add_argument("--connections", type=int, nargs="+", default=[100, 1000], help="page counts for throughput")
    ap.add_argument("--scale-connections", type=int, default=10000)
    ap.add_argument("--timer-connections", type=int, default=10000)
    ap.add_argument("--timer-timeout-ms", type=int, default=5000)
    ap.add_argument("--timer-spread", type=float, default=3.0)
    ap.add_argument("--peers", nargs="+", default=["bridged", "echo", "python"], choices=["bridged", "echo", "python"])
    ap.add_argument("--only", nargs="+", default=["throughput", "rate", "scale", "timers"],
                    choices=["throughput", "rate", "scale", "timers"])
    ap.add_argument("--repeat", type=int, default=3, help="rounds of each bridged/echo throughput run (median reported)")
    ap.add_argument("--bridged", help="the bridged binary to measure (default .build/release/bridged)")
    ap.add_argument("--daemon-cpu", type=int, default=0)
    ap.add_argument("--load-cpu", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(BENCH, "results"), help="directory for latest.md/latest.json")
    ap.add_argument("--nice", type=int, default=-20 if os.geteuid() == 0 else 0,
                    help="niceness of the peer and the load generator (default -20 as root: other work on "
                         "the machine then disturbs the runs less)")
    ap.add_argument("--wait-quiet", type=float, default=20.0,
                    help="seconds to wait, before each run, for other processes to leave the CPUs idle")
    args = ap.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = max(args.scale_connections, args.timer_connections, *args.connections) + 200
    if hard != resource.RLIM_INFINITY and hard < need:
        sys.exit(f"run.py: the file descriptor hard limit ({hard}) is below {need}; raise it (ulimit -Hn) first")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else max(soft, need), hard))

    bench = Bench(args)
    for path in (bench.bridged, bench.load):
        if not os.path.exists(path):
            sys.exit(f"run.py: {path} is missing; run `make bench` (it builds the release products)")
    if "echo" in args.peers:
        bench.build_echo()
    info = machine_info()
    log(f"machine: {info}")

    peers = args.peers
    if "throughput" in args.only:
        # Rounds interleave the peers, so slow drifts of a shared machine hit them alike; the
        # report takes each configuration's median round.
        for rnd in range(args.repeat):
            for n in args.connections:
                if "echo" in peers:
                    bench.run("echo", "echo", n)
                if "bridged" in peers:
                    bench.run("bridged", "echo", n)
                    bench.run("bridged", "navigation", n)
                if "python" in peers and rnd == 0:  # 10-20× slower: one round tells enough
                    bench.run("python", "echo", n)
                    bench.run("python", "navigation", n)
    if "rate" in args.only and "bridged" in peers:
        # "p99 ≤ 2 ms at half that rate": half of the navigation target (0.6× the echo's rate).
        echo100 = bench.summary().get("echo/echo/100", {}).get("repliesPerSecond")
        if not echo100:
            echo100 = bench.run("echo", "echo", 100).get("repliesPerSecond")
        if echo100:
            rate = round(0.3 * echo100)
            for _ in range(args.repeat):
                bench.run("bridged", "navigation", 100, ["--rate", str(rate)], key="bridged/navigation/100@rate")
                if "echo" in peers:
                    bench.run("echo", "echo", 100, ["--rate", str(rate)], key="echo/echo/100@rate")
    if "scale" in args.only:
        for p in peers:
            bench.run(p, "scale", args.scale_connections, ["--hold", "2"])
    if "timers" in args.only:
        for p in peers:
            if p == "echo":
                continue
            bench.run(p, "timers", args.timer_connections,
                      ["--timeout-ms", str(args.timer_timeout_ms), "--spread", str(args.timer_spread)],
                      timeout_ms=args.timer_timeout_ms)

    text = report(bench, info, args)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "latest.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(args.out, "latest.json"), "w") as f:
        json.dump({"machine": info, "args": vars(args), "results": bench.results}, f, indent=1)
    print(text)


if __name__ == "__main__":
    main()
