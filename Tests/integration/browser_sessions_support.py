"""Shared pieces of the browser-session tests (docs/BROWSER.md): the demo directory, waits over
the controller protocol (a web view's expression, a stack, a new browser session), a small
site of its own on another loopback origin (fixture `site`), a directory served as it is
(`serve_directory`, the Capacitor tests' apps), and /proc helpers that find a
daemon's Chromium processes. Used by test_browser_sessions.py, test_back_button.py and
test_dashboard.py.
"""
import asyncio
import functools
import http.server
import json
import os
import shutil
import threading
import time
import urllib.parse

import pytest

from websockets.asyncio.client import connect as ws_connect

from bridgeclient import controller, ids

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(REPO, "js-client", "demo")
TIMEOUT = 30


def run(coro):
    return asyncio.run(coro)


class Pages(http.server.BaseHTTPRequestHandler):
    """A site of its own (another loopback origin): a form page and an echo of what was sent."""

    FORM = b"""<!doctype html><meta name="viewport" content="width=device-width">
<title>form</title>
<input id="q" value="">
<form id="f" method="post" action="/echo"><input name="name" value="a b&c"><button id="go">go</button></form>
<a id="tt" href="tt://settings">settings</a>
<a id="hash" href="#here">here</a>
<script>window.alive = "yes";</script>"""

    META = b"""<!doctype html><title>meta</title><meta http-equiv="refresh" content="0;url=/refreshed">"""

    GET_FORM = b"""<!doctype html><title>get form</title>
<form method="get" action="/search"><input name="q" value="x y"><button id="go">go</button></form>
<script>window.alive = "yes";</script>"""

    # Red, then blue, green, yellow, one PWA navigation each; a POP repaints nothing and reports
    # nothing.
    PWA = b"""<!doctype html><meta name="viewport" content="width=device-width"><title>pwa</title>
<style>html,body{margin:0;height:100%;background:#f00}</style>
<script>
window.views = 0;
window.next = async () => {
  await Astro.jsRpcMethod("pwa-navigate", [])();
  views++;
  history.pushState({}, "", "?view=" + views);
  document.body.style.background = ["#f00", "#00f", "#0f0", "#ff0"][views % 4];
  Astro.jsRpcMethod("pwa-rendered", [])();
};
window.pops = 0;
addEventListener("popstate", () => { window.pops++; });
</script><body></body>"""

    # Pages that hold a connection open while they live (an event stream): its end shows the
    # tab is gone.
    held = set()
    released = set()

    def log_message(self, *args):
        pass

    def _hold(self, key):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        Pages.held.add(key)
        try:
            while True:
                self.wfile.write(b"data: x\n\n")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass
        Pages.released.add(key)

    def _send(self, body, status=200):
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        if self.path.startswith("/form"):
            self._send(self.FORM)
        elif self.path.startswith("/meta"):
            self._send(self.META)
        elif self.path.startswith("/getform"):
            self._send(self.GET_FORM)
        elif self.path.startswith("/pwa"):
            self._send(self.PWA)
        elif self.path.startswith("/holding"):
            key = query["id"][0]
            self._send(f"<p>{key}</p><script>new EventSource('/hold?id={key}')</script>".encode())
        elif self.path.startswith("/hold"):
            self._hold(query["id"][0])
        else:
            body = f"<pre id='echo'>GET {self.path}</pre>".encode()
            self._send(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length).decode()
        ctype = self.headers.get("Content-Type", "")
        self._send(f"<pre id='echo'>POST {self.path} {ctype} {data}</pre>".encode())


def serving(handler):
    """Serves `handler` (a BaseHTTPRequestHandler) on a loopback port of its own while the
    generator is suspended; yields its origin (a fixture's body: `yield from serving(H)`)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class _QuietFiles(http.server.SimpleHTTPRequestHandler):
    """A directory's files, without a log line per request."""

    def log_message(self, *args):
        pass


def serve_directory(path):
    """Serves the files under `path` on a loopback port of its own while the generator is
    suspended; yields its origin (a fixture's body: `yield from serve_directory(APP_DIR)`)."""
    yield from serving(functools.partial(_QuietFiles, directory=str(path)))


@pytest.fixture
def site():
    yield from serving(Pages)


def descendants(pid):
    """Live (non-zombie) processes below `pid`, from /proc."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        children.setdefault(int(fields[1]), []).append((int(name), fields[0]))
    out, todo = [], [pid]
    while todo:
        for child, state in children.get(todo.pop(), []):
            if state != "Z":
                out.append(child)
            todo.append(child)
    return out


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split()[0] != "Z"


async def wait_until(c, session, webview, expression, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = await c.call("webview.evaluate", {"session": session, "webview": webview, "expression": expression})
        if last.get("result", {}).get("value") is True:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {expression!r} in {webview}: {last}")


async def until(probe, what, timeout=TIMEOUT):
    """Awaits `probe()` again and again until it returns something truthy (a state of another
    process, which sends no event the test could wait on); fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out after {timeout}s waiting for {what}"
        await asyncio.sleep(0.05)


async def evaluate(c, session, webview, expression):
    return (await c.request("webview.evaluate", {"session": session, "webview": webview, "expression": expression}))["value"]


async def stack_is(c, session, expected, timeout=TIMEOUT):
    await c.next_event("stack.changed", timeout, where=lambda p: p["session"] == session and ids(p["stack"]) == expected)
    got = await c.request("session.get", {"session": session})
    assert ids(got["stack"]) == expected


async def create(c, url):
    result = await c.request("session.create", {"url": url, "browser": True}, timeout=60)
    s = result["session"]
    await c.next_event("page.connected", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == "W1")
    return s


# ---------------------------------------------------------------------------------------------
# Chromium's own view: the daemon's Chromium, also reachable on a DevTools port


def watched_chromium(directory):
    """A `--chromium` for the daemon: Debian's chromium with a DevTools port (0: its choice) next
    to the daemon's pipe, so that a test can ask Chromium itself which contexts and tabs exist."""
    real = shutil.which("chromium")
    assert real, "needs Chromium (Debian package 'chromium')"
    wrapper = os.path.join(str(directory), "chromium-watched")
    with open(wrapper, "w") as f:
        f.write(f'#!/bin/sh\nexec {real} --remote-debugging-port=0 "$@"\n')
    os.chmod(wrapper, 0o755)
    return wrapper


class DevTools:
    """A second DevTools client of the daemon's Chromium (see `watched_chromium`): it only asks."""

    def __init__(self, ws):
        self.ws = ws
        self.next_id = 1

    @classmethod
    async def of(cls, daemon, timeout=TIMEOUT):
        """Connects to the Chromium running under `daemon` once it announced its port."""
        deadline = time.monotonic() + timeout
        while True:
            for pid in descendants(daemon.proc.pid):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        args = f.read().decode(errors="replace").split("\0")
                except OSError:
                    continue
                profile = next((a.split("=", 1)[1] for a in args if a.startswith("--user-data-dir=")), None)
                if profile and "--type=" not in " ".join(args):
                    try:
                        with open(os.path.join(profile, "DevToolsActivePort")) as f:
                            port, path = f.read().split()[:2]
                    except (OSError, ValueError):
                        continue
                    return cls(await ws_connect(f"ws://127.0.0.1:{port}{path}", max_size=None))
            assert time.monotonic() < deadline, "the daemon's Chromium never announced its DevTools port"
            await asyncio.sleep(0.05)

    async def call(self, method, params=None):
        rid = self.next_id
        self.next_id += 1
        await self.ws.send(json.dumps({"id": rid, "method": method, "params": params or {}}))
        while True:
            message = json.loads(await asyncio.wait_for(self.ws.recv(), TIMEOUT))
            if message.get("id") == rid:
                assert "result" in message, f"{method}: {message}"
                return message["result"]

    async def contexts(self):
        """The browser contexts Chromium has (the default one is not listed)."""
        return set((await self.call("Target.getBrowserContexts"))["browserContextIds"])

    async def pages(self, contexts=None):
        """Chromium's tabs, [(browserContextId, url)] sorted; only those of `contexts` when given."""
        infos = (await self.call("Target.getTargets"))["targetInfos"]
        return sorted((t.get("browserContextId", ""), t["url"]) for t in infos
                      if t["type"] == "page" and (contexts is None or t.get("browserContextId") in contexts))

    async def targets(self, contexts):
        """The tabs of `contexts`: [(browserContextId, targetId, url)] sorted."""
        infos = (await self.call("Target.getTargets"))["targetInfos"]
        return sorted((t.get("browserContextId", ""), t["targetId"], t["url"]) for t in infos
                      if t["type"] == "page" and t.get("browserContextId") in contexts)

    async def close(self):
        await self.ws.close()


async def watched_session(daemon, url, ready):
    """A controller, a browser session on `url` whose W1 satisfies `ready` (a JS expression), and
    a DevTools client of the daemon's Chromium (see `watched_chromium`) with that session's
    browser context: (controller, session, chromium, context)."""
    c = await controller(daemon.ws_url)
    s = await create(c, url)
    await wait_until(c, s, "W1", ready)
    chromium = await DevTools.of(daemon)
    context = (await c.request("session.get", {"session": s}))["browserContextId"]
    assert context in await chromium.contexts()
    return c, s, chromium, context
