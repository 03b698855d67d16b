"""The daemon's resident set size with one slow reader (issue 25, item 1).

One controller subscribes to every session and then stops reading; four pages push
(`pwa-navigate`, `back`, `pwa-rendered`, pipelined in batches, reading their own replies) until
the daemon closes the controller with 1008 (send queue overflow). RSS is sampled throughout, and
after the controller is gone. Used by `test_reliability.py`; run it directly for the numbers of
docs/SECURITY.md and docs/PERFORMANCE.md:

    python3 Tests/integration/slow_reader_rss.py [--limit BYTES] [--after-s 10] [--json]

(The binary is $BRIDGED_BIN or .build/release/bridged, as for the tests.)
"""
from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time

from conftest import OP_TEXT, RawWebSocket, client_frame, start_daemon

MIB = 1024 * 1024


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def call(ws: RawWebSocket, id_: int, method: str, params: dict | None = None) -> dict:
    ws.send_text(json.dumps({"id": id_, "method": method, "params": params or {}}))
    while True:
        _, payload = ws.recv_message()
        frame = json.loads(payload)
        if frame.get("id") == id_:
            return frame


class Pusher(threading.Thread):
    """A page that pushes a state, goes back, renders, in pipelined batches."""

    def __init__(self, d, index: int, stop: threading.Event, batch: int = 50):
        super().__init__(daemon=True)
        self.d, self.index, self.stop, self.batch = d, index, stop, batch
        self.cycles = 0
        self.error: BaseException | None = None

    def run(self):
        try:
            ws = RawWebSocket.to(self.d, timeout=30)
            hello = call(ws, 1, "hello", {"protocol": 1, "role": "page",
                                          "url": f"http://127.0.0.1/app/{self.index}/"})
            assert "result" in hello, hello
            next_id = 2
            pad = "p" * 200  # urls of a realistic length: events of a few hundred bytes
            while not self.stop.is_set():
                out = bytearray()
                for k in range(self.batch):
                    for method, params in (("pwa-navigate", {"url": f"http://127.0.0.1/app/{self.index}/{k}/{pad}"}),
                                           ("back", {}), ("pwa-rendered", {})):
                        out += client_frame(OP_TEXT, json.dumps({"id": next_id, "method": method, "params": params}).encode())
                        next_id += 1
                ws.sock.sendall(out)
                last = next_id - 1
                while True:
                    _, payload = ws.recv_message()
                    if json.loads(payload).get("id") == last:
                        break
                self.cycles += self.batch
            ws.close()
        except BaseException as e:  # reported by the caller
            self.error = e


def measure(limit: int | None, after_s: float = 10.0, sample_s: float = 0.25, pages: int = 4,
            extra_args: tuple[str, ...] = (), max_push_s: float = 120.0,
            settle_within: int | None = None) -> dict:
    """Runs the scenario; returns idle/peak/after RSS (bytes) and the time series. With
    `settle_within`, sampling after the close ends as soon as RSS is within that many bytes of
    idle (at most `after_s`)."""
    args = ["--log-level", "warning"]
    if limit is not None:
        args += ["--max-send-queue-bytes", str(limit)]
    d = start_daemon(*args, *extra_args)
    try:
        pid = d.proc.pid
        # Idle: a page connected and gone, a controller connected and gone (arenas exist).
        warm = RawWebSocket.to(d)
        assert "result" in call(warm, 1, "hello", {"protocol": 1, "role": "page", "url": "http://127.0.0.1/w"})
        warm.close()
        idle = rss_bytes(pid)

        controller = RawWebSocket.to(d, rcvbuf=4096, timeout=30)
        assert "result" in call(controller, 1, "hello", {"protocol": 1, "role": "controller"})
        assert "result" in call(controller, 2, "session.subscribe", {})
        # From here on the controller reads nothing.
        stop = threading.Event()
        pushers = [Pusher(d, i, stop) for i in range(pages)]
        t0 = time.monotonic()
        for p in pushers:
            p.start()
        series = []
        peak = idle
        overflowed = False
        deadline = t0 + max_push_s
        while time.monotonic() < deadline:
            r = rss_bytes(pid)
            peak = max(peak, r)
            series.append((round(time.monotonic() - t0, 2), r))
            if "too slow" in d.stderr():
                overflowed = True
                break
            if any(p.error for p in pushers):
                break
            time.sleep(sample_s)
        t_overflow = time.monotonic() - t0
        stop.set()
        for p in pushers:
            p.join(60)
        errors = [repr(p.error) for p in pushers if p.error]
        # The pages are gone too; the controller is closed (by the daemon; we close our end).
        r = rss_bytes(pid)
        peak = max(peak, r)
        series.append((round(time.monotonic() - t0, 2), r))
        controller.close()
        closed_at = time.monotonic()
        after_series = []
        while time.monotonic() - closed_at < after_s:
            time.sleep(sample_s)  # RSS has no event to wait on: sampled
            r = rss_bytes(pid)
            after_series.append((round(time.monotonic() - closed_at, 2), r))
            if settle_within is not None and r <= idle + settle_within:
                break
        after = after_series[-1][1] if after_series else rss_bytes(pid)
        return {
            "limit": limit, "idle": idle, "peak": peak, "after": after, "overflowed": overflowed,
            "secondsToOverflow": round(t_overflow, 2), "cycles": sum(p.cycles for p in pushers),
            "errors": errors, "series": series, "afterSeries": after_series,
        }
    finally:
        d.stop_if_running()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=None, help="--max-send-queue-bytes (default: the daemon's)")
    ap.add_argument("--after-s", type=float, default=10.0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    m = measure(a.limit, a.after_s)
    if a.json:
        print(json.dumps(m))
        return 0
    print(f"limit {m['limit']}: idle {m['idle'] / MIB:.1f} MiB, peak {m['peak'] / MIB:.1f} MiB, "
          f"{a.after_s:.0f} s after close {m['after'] / MIB:.1f} MiB; overflow {m['overflowed']} "
          f"after {m['secondsToOverflow']} s, {m['cycles']} cycles, errors {m['errors']}")
    for t, r in m["series"][:: max(1, len(m["series"]) // 20)]:
        print(f"  t={t:6.2f}s rss={r / MIB:8.1f} MiB")
    for t, r in m["afterSeries"][:: max(1, len(m["afterSeries"]) // 10)]:
        print(f"  after+{t:5.2f}s rss={r / MIB:8.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
