#!/usr/bin/env python3
"""Memory per session, measured as the daemon's RSS (/proc/PID/status VmRSS).

N pages each fill their session to --max-session-bytes the way an attacker would (255
`pwa-navigate` events with the longest url and title --max-url-bytes allows) and disconnect; the
sessions stay (for --session-idle-s). Prints RSS before and after and the growth per session,
next to the documented worst case (docs/SECURITY.md). The fill is the one of
Tests/integration/test_session_memory.py.

    swift build -c release --product bridged
    python3 Benchmarks/session_memory.py                   # 200 sessions, default limits
    python3 Benchmarks/session_memory.py --escaped         # titles JSON must escape (\\u0001)
    python3 Benchmarks/session_memory.py --max-session-bytes 262144 --sessions 400
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "integration"))

import test_session_memory as fill  # noqa: E402
from conftest import start_daemon  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--max-url-bytes", type=int, default=8192)
    ap.add_argument("--max-session-bytes", type=int, default=1024 * 1024)
    ap.add_argument("--escaped", action="store_true",
                    help="titles of U+0001, which the stack JSON writes as \\u0001 (6 bytes each)")
    ap.add_argument("--bin", help="the bridged binary (default: $BRIDGED_BIN, else .build/release/bridged)")
    args = ap.parse_args()
    if args.bin:
        os.environ["BRIDGED_BIN"] = args.bin
    if args.escaped:
        original = fill.padded
        fill.padded = lambda prefix, n, f="a": original(prefix, n, "\x01" if f == "t" else f)
    d = start_daemon("--max-url-bytes", str(args.max_url_bytes), "--max-session-bytes", str(args.max_session_bytes),
                     "--max-sessions", str(args.sessions + 10),
                     "--ping-interval-s", "3600", "--ping-timeout-s", "7200")  # (the client answers no ping)
    try:
        before, after, fills = fill.fill_sessions(d, args.sessions, args.max_url_bytes)
    finally:
        d.stop_if_running()
    accepted = [255 - len(f["refusals"]) for f in fills]
    mib = 1024 * 1024
    per = (after - before) / args.sessions
    print(f"sessions {args.sessions}, --max-url-bytes {args.max_url_bytes}, --max-session-bytes {args.max_session_bytes}"
          f"{', escaped titles' if args.escaped else ''}")
    print(f"pwa-navigate events accepted per session: {min(accepted)}-{max(accepted)} of 255; refused: "
          f"{sorted({e['code'] for f in fills for e in f['refusals']})}")
    print(f"RSS before {before / mib:.1f} MiB, after {after / mib:.1f} MiB: {per / mib:.2f} MiB per session "
          f"({per / args.max_session_bytes:.2f}x --max-session-bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
