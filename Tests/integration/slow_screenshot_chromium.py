#!/usr/bin/env python3
"""A Chromium whose screenshots are slow, as a loaded machine's are: give it to the daemon as
`--chromium` (bridged check passes it on). It runs the real Chromium ($REAL_CHROMIUM, else
`chromium` on PATH) with the same arguments and relays the DevTools pipe (fd 3: the daemon's
commands, fd 4: Chromium's replies and events, NUL-terminated JSON) both ways, holding the
reply to every `Page.captureScreenshot` (or to every command named in $SLOW_METHODS, comma
separated, and every event so named) back for $SLOW_SCREENSHOT_MS (default 1000) while the rest
flows. Chromium dies with the relay (PR_SET_PDEATHSIG); the relay exits once Chromium
closed its end of the pipe, and ends Chromium when the daemon closes its end or signals it."""
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

DELAY = int(os.environ.get("SLOW_SCREENSHOT_MS", "1000")) / 1000
SLOW = set((os.environ.get("SLOW_METHODS") or "Page.captureScreenshot").split(","))
REAL = os.environ.get("REAL_CHROMIUM") or shutil.which("chromium") or "chromium"


def main():
    to_chrome_r, to_chrome_w = os.pipe()
    from_chrome_r, from_chrome_w = os.pipe()

    def child_setup():
        os.dup2(to_chrome_r, 3)
        os.dup2(from_chrome_w, 4)
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    # The daemon's pipe ends are our fds 3 and 4; move them out of the child's way first.
    daemon_in, daemon_out = os.dup(3), os.dup(4)
    os.close(3)
    os.close(4)
    proc = subprocess.Popen([REAL, *sys.argv[1:]], preexec_fn=child_setup, pass_fds=(3, 4), close_fds=True)
    os.close(to_chrome_r)
    os.close(from_chrome_w)
    screenshots = set()
    lock = threading.Lock()
    locks = {to_chrome_w: threading.Lock(), daemon_out: threading.Lock()}

    def write(fd, data):  # whole frames: daemon_out has the relay and the timers as writers
        with locks[fd]:
            while data:
                data = data[os.write(fd, data):]

    def frames(fd):
        buf = b""
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            buf += chunk
            *done, buf = buf.split(b"\0")
            yield from done

    def commands():  # daemon → Chromium
        for frame in frames(daemon_in):
            try:
                m = json.loads(frame)
                if m.get("method") in SLOW:
                    with lock:
                        screenshots.add((m.get("sessionId"), m.get("id")))
            except ValueError:
                pass
            write(to_chrome_w, frame + b"\0")
        proc.terminate()  # the daemon closed its end: it is done with this browser

    def replies():  # Chromium → daemon
        for frame in frames(from_chrome_r):
            try:
                m = json.loads(frame)
                key = (m.get("sessionId"), m.get("id"))
                event = m.get("method")
            except ValueError:
                key = event = None
            with lock:
                slow = key in screenshots or event in SLOW
                screenshots.discard(key)
            if slow:
                threading.Timer(DELAY, write, (daemon_out, frame + b"\0")).start()
            else:
                write(daemon_out, frame + b"\0")

    signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    threading.Thread(target=commands, daemon=True).start()
    reader = threading.Thread(target=replies, daemon=True)
    reader.start()
    code = proc.wait()
    reader.join(timeout=DELAY + 5)
    time.sleep(DELAY)  # a held-back reply still on its timer goes out before the pipe closes
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
