#!/usr/bin/env python3
"""The navigation workload's peer as a test-harness author would write it: Python `websockets`
(asyncio), `json`, a dict per session, `loop.call_later` for the foreground fallback.

It answers the frames `bridge-load` sends with the same shapes bridged uses (section 5 of
docs/PROTOCOL.md): hello (page and controller), pwa-navigate, pwa-rendered, back (with its
`back` event), ping, and session.subscribe with `foreground.removed` events for the timers
workload. It is a benchmark peer, not a second implementation of the protocol: no claims,
no classic navigation, no limits.

    python3 mock_peer.py --port 0 [--foreground-timeout-ms 1000]
prints `listening on http://127.0.0.1:PORT`; SIGINT/SIGTERM stop it.
"""
import argparse
import asyncio
import json
import secrets
import signal
import time

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"))


class Session:
    def __init__(self, sid, url, timeout_ms):
        self.id = sid
        self.timeout_ms = timeout_ms
        self.next_placeholder = 1
        self.webview = {"id": "W1", "kind": "webview", "mode": "classic", "url": url,
                        "title": None, "connected": True}
        self.stack = [self.webview]
        self.foreground = None  # (kind, shown_at, timer handle)
        self.page = None


class Mock:
    def __init__(self, timeout_ms):
        self.timeout_ms = timeout_ms
        self.sessions = {}
        self.subscribers = []  # (websocket, set of event names or None)
        self.controllers = 0

    async def emit(self, session, name, params):
        frame = dumps({"event": name, "params": {"session": session.id, **params}})
        for ws, events in list(self.subscribers):
            if events is None or name in events:
                try:
                    await ws.send(frame)
                except Exception:
                    pass

    def show_foreground(self, session, kind):
        self.remove_foreground(session, "superseded")
        loop = asyncio.get_running_loop()
        shown = time.monotonic()
        timer = loop.call_later(self.timeout_ms / 1000, self.fire, session, shown)
        session.foreground = (kind, shown, timer)

    def remove_foreground(self, session, reason):
        if session.foreground is None:
            return None
        kind, shown, timer = session.foreground
        timer.cancel()
        session.foreground = None
        latency = int((time.monotonic() - shown) * 1000)
        if self.subscribers:
            asyncio.ensure_future(self.emit(session, "foreground.removed",
                                            {"webview": "W1", "reason": reason, "latencyMs": latency}))
        return latency

    def fire(self, session, shown):
        if session.foreground is not None and session.foreground[1] == shown:
            self.remove_foreground(session, "timeout")

    async def handler(self, ws):
        role = None
        session = None
        try:
            async for raw in ws:
                msg = json.loads(raw)
                rid = msg.get("id")
                method = msg.get("method")
                params = msg.get("params") or {}
                if method is None:
                    continue  # events: not used by the workloads
                if method == "hello":
                    role = params.get("role")
                    if role == "page":
                        sid = "s-" + secrets.token_hex(8)
                        session = Session(sid, params.get("url", ""), self.timeout_ms)
                        session.page = ws
                        self.sessions[sid] = session
                        token = secrets.token_hex(16)
                        result = {"protocol": 1, "session": sid, "webview": "W1", "token": token,
                                  "pageUrl": f"{params.get('url', '')}?bridge_session={sid}&bridge_webview=W1&bridge_token={token}",
                                  "mode": "classic", "stack": session.stack}
                    else:
                        self.controllers += 1
                        result = {"protocol": 1, "controller": f"c{self.controllers}", "version": "mock"}
                    await ws.send(dumps({"id": rid, "result": result}))
                elif method == "ping":
                    await ws.send(dumps({"id": rid, "result": {}}))
                elif method == "pwa-navigate":
                    wv = session.webview
                    pid = f"P{session.next_placeholder}"
                    session.next_placeholder += 1
                    placeholder = {"id": pid, "kind": "placeholder", "of": "W1", "url": wv["url"]}
                    session.stack.insert(len(session.stack) - 1, placeholder)
                    if params.get("url") is not None:
                        wv["url"] = params["url"]
                    wv["mode"] = "pwa"
                    self.show_foreground(session, "blank")
                    await ws.send(dumps({"id": rid, "result": {"placeholder": pid, "stack": session.stack}}))
                elif method == "pwa-rendered":
                    latency = self.remove_foreground(session, "rendered")
                    if latency is None:
                        result = {"removed": False}
                    else:
                        result = {"removed": True, "reason": "rendered", "latencyMs": latency}
                    await ws.send(dumps({"id": rid, "result": result}))
                elif method == "back":
                    stack = session.stack
                    if len(stack) > 1 and stack[-2]["kind"] == "placeholder":
                        placeholder = stack.pop(-2)
                        session.webview["url"] = placeholder["url"]
                        self.show_foreground(session, "placeholder")
                        await ws.send(dumps({"id": rid, "result": {"action": "swap", "removed": [placeholder["id"]], "stack": stack}}))
                        await ws.send(dumps({"event": "back", "params": {"placeholder": placeholder["id"], "url": placeholder["url"]}}))
                    else:
                        await ws.send(dumps({"id": rid, "result": {"action": "none", "removed": [], "stack": stack}}))
                elif method == "session.subscribe":
                    events = params.get("events")
                    self.subscribers.append((ws, set(events) if events is not None else None))
                    await ws.send(dumps({"id": rid, "result": {}}))
                else:
                    await ws.send(dumps({"id": rid, "error": {"code": "unknown-method", "message": f"no method {method!r}"}}))
        except ConnectionClosed:
            pass
        finally:
            self.subscribers = [s for s in self.subscribers if s[0] is not ws]
            if session is not None:
                self.remove_foreground(session, "closed")
                self.sessions.pop(session.id, None)


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--foreground-timeout-ms", type=int, default=1000)
    args = parser.parse_args()
    mock = Mock(args.foreground_timeout_ms)
    stop = asyncio.get_running_loop().create_future()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, lambda: stop.done() or stop.set_result(None))
    async with serve(mock.handler, "127.0.0.1", args.port, max_size=65536) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"listening on http://127.0.0.1:{port}", flush=True)
        await stop


if __name__ == "__main__":
    asyncio.run(main())
