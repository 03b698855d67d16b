"""A small, independent client of the bridge protocol for integration tests (Python websockets).

Every wait is bounded: a test that waits for a reply or an event fails with a clear message
instead of hanging.
"""
import asyncio
import json

import websockets
from websockets.asyncio.client import connect as ws_connect

DEFAULT_TIMEOUT = 5.0


class Conn:
    """One WebSocket connection: requests matched to replies by id, events kept in order."""

    def __init__(self, ws):
        self.ws = ws
        self.next_id = 1
        self.frames = []  # every frame received, in order
        self.cursor = 0  # events before this index have been consumed by next_event
        self.replies = {}
        self.changed = asyncio.Event()
        self.close_code = None
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, url, **kwargs):
        ws = await ws_connect(url, max_size=None, compression=None, **kwargs)
        return cls(ws)

    async def _read(self):
        try:
            async for message in self.ws:
                frame = json.loads(message)
                self.frames.append(frame)
                if "id" in frame and ("result" in frame or "error" in frame):
                    self.replies.setdefault(frame["id"], frame)
                self.changed.set()
        except websockets.ConnectionClosed:
            pass
        finally:
            self.close_code = self.ws.close_code
            self.changed.set()

    async def _wait(self, predicate, timeout, what):
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            value = predicate()
            if value is not None:
                return value
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}; frames: {self.frames[-8:]}")
            self.changed.clear()
            value = predicate()
            if value is not None:
                return value
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    async def send_raw(self, text):
        await self.ws.send(text)

    async def send(self, obj):
        await self.ws.send(json.dumps(obj))

    async def call(self, method, params=None, timeout=DEFAULT_TIMEOUT):
        """Sends a request and returns the whole reply frame (result or error)."""
        rid = self.next_id
        self.next_id += 1
        frame = {"id": rid, "method": method}
        if params is not None:
            frame["params"] = params
        await self.send(frame)
        return await self.reply(rid, timeout)

    async def reply(self, rid, timeout=DEFAULT_TIMEOUT):
        return await self._wait(lambda: self.replies.get(rid), timeout, f"the reply to request {rid}")

    async def request(self, method, params=None, timeout=DEFAULT_TIMEOUT):
        """Sends a request and returns its result; fails the test on an error reply."""
        reply = await self.call(method, params, timeout)
        assert "result" in reply, f"{method} failed: {reply}"
        return reply["result"]

    async def error(self, method, params=None, timeout=DEFAULT_TIMEOUT):
        """Sends a request that must fail and returns its error code."""
        reply = await self.call(method, params, timeout)
        assert "error" in reply, f"{method} should have failed: {reply}"
        return reply["error"]["code"]

    async def event(self, name, params=None):
        frame = {"event": name}
        if params is not None:
            frame["params"] = params
        await self.send(frame)

    async def next_event(self, name, timeout=DEFAULT_TIMEOUT, where=None):
        """The next event called `name` (after the last one consumed), optionally matching `where`."""

        def find():
            for i in range(self.cursor, len(self.frames)):
                f = self.frames[i]
                if f.get("event") == name and (where is None or where(f["params"])):
                    self.cursor = i + 1
                    return f["params"]
            return None

        return await self._wait(find, timeout, f"event {name!r}")

    def events(self, name):
        return [f["params"] for f in self.frames if f.get("event") == name]

    async def closed(self, timeout=DEFAULT_TIMEOUT):
        """Waits until the daemon closed the connection; returns the close code."""
        await asyncio.wait_for(asyncio.shield(self.reader), timeout)
        return self.close_code

    async def close(self):
        await self.ws.close()
        try:
            await asyncio.wait_for(self.reader, 2)
        except (asyncio.TimeoutError, Exception):
            pass


async def page(base_ws, url="http://127.0.0.1/app/", claim=None):
    """Connects a page and says hello; `claim` is a dict with session/webview/token."""
    c = await Conn.open(base_ws)
    params = {"protocol": 1, "role": "page", "url": url}
    if claim:
        params.update({k: claim[k] for k in ("session", "webview", "token")})
    c.hello = await c.request("hello", params)
    return c


async def controller(base_ws, token=None, handles=None, subscribe=True):
    c = await Conn.open(base_ws)
    params = {"protocol": 1, "role": "controller"}
    if token:
        params["token"] = token
    if handles:
        params["handles"] = handles
    c.hello = await c.request("hello", params)
    if subscribe:
        await c.request("session.subscribe", {})
    return c


def ids(stack):
    return " ".join(item["id"] for item in stack)
