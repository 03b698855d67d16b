"""The integration tests' asyncio face of the project's Python client (clients/python,
`bridged.Connection`): the WebSocket, the framing, the handshake and the reading of frames are
the package's; this module only lets a coroutine await them.

`Conn` wraps one `bridged.Connection` opened with `record=True` (every frame received kept in
order, in `frames`): requests are matched to replies by id, events are taken in order with a
cursor (`next_event`). The connection's reader thread wakes the event loop through a listener;
sending is the package's (a short blocking write). Every wait is bounded: a test that waits for
a reply or an event fails with a clear message instead of hanging.
"""
import asyncio
import pathlib
import sys

# The checkout's own package, installed or not (conftest.py does the same; Benchmarks/ import
# this module without conftest).
_SRC = str(pathlib.Path(__file__).resolve().parents[2] / "clients" / "python" / "src")
if _SRC not in sys.path:
    sys.path.insert(0, _SRC)

import bridged  # noqa: E402

DEFAULT_TIMEOUT = 5.0


class Conn:
    """One connection: requests matched to replies by id, events kept in order."""

    def __init__(self, connection: bridged.Connection, changed: asyncio.Event):
        self.connection = connection
        self.changed = changed
        self.cursor = 0  # events before this index have been consumed by next_event
        self.replies = {}

    @classmethod
    async def open(cls, url, origin=None, headers=None, **kwargs):
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()

        def wake(_frame):
            try:
                loop.call_soon_threadsafe(changed.set)
            except RuntimeError:
                pass  # the test's event loop is gone

        connection = await asyncio.to_thread(bridged.Connection, url, record=True, listener=wake,
                                             origin=origin, headers=headers, **kwargs)
        return cls(connection, changed)

    @property
    def frames(self):
        """Every frame received, in order."""
        return self.connection.frames

    @property
    def close_code(self):
        return self.connection.close_code

    async def _wait(self, predicate, timeout, what):
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            self.changed.clear()
            value = predicate()
            if value is not None:
                return value
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}; frames: {self.frames[-8:]}")
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    async def send_raw(self, text):
        """A text frame as it is (JSON or not); bytes go as a binary frame."""
        if isinstance(text, (bytes, bytearray)):
            self.connection.send_bytes(text)
        else:
            self.connection.send_text(text)

    async def send(self, obj):
        self.connection.send(obj)

    async def call(self, method, params=None, timeout=DEFAULT_TIMEOUT):
        """Sends a request and returns the whole reply frame (result or error)."""
        return await self.call_frame(method, params, timeout)

    async def call_frame(self, method, params=None, timeout=DEFAULT_TIMEOUT):
        """`call`, which a subclass may redefine; `request` and `error` use this one."""
        rid = self.connection.send_request(method, params)
        return await self.reply(rid, timeout)

    async def reply(self, rid, timeout=DEFAULT_TIMEOUT):
        def find():
            if rid not in self.replies:
                got = self.connection.take_reply(rid)
                if got is not None:
                    self.replies[rid] = got
            return self.replies.get(rid)

        return await self._wait(find, timeout, f"the reply to request {rid}")

    async def request(self, method, params=None, timeout=DEFAULT_TIMEOUT):
        """Sends a request and returns its result; fails the test on an error reply."""
        reply = await self.call_frame(method, params, timeout)
        assert "result" in reply, f"{method} failed: {reply}"
        return reply["result"]

    async def error(self, method, params=None, timeout=DEFAULT_TIMEOUT):
        """Sends a request that must fail and returns its error code."""
        reply = await self.call_frame(method, params, timeout)
        assert "error" in reply, f"{method} should have failed: {reply}"
        return reply["error"]["code"]

    async def event(self, name, params=None):
        frame = {"event": name}
        if params is not None:
            frame["params"] = params
        await self.send(frame)

    async def next_event(self, name, timeout=DEFAULT_TIMEOUT, where=None):
        """The next event called `name` (after the last one consumed), optionally matching `where`."""
        frames = self.frames

        def find():
            for i in range(self.cursor, len(frames)):
                f = frames[i]
                if isinstance(f, dict) and f.get("event") == name and (where is None or where(f["params"])):
                    self.cursor = i + 1
                    return f["params"]
            return None

        return await self._wait(find, timeout, f"event {name!r}")

    def events(self, name):
        return [f["params"] for f in list(self.frames) if isinstance(f, dict) and f.get("event") == name]

    async def closed(self, timeout=DEFAULT_TIMEOUT):
        """Waits until the daemon closed the connection; returns the close code."""
        return await self._wait(lambda: self.connection.close_code, timeout, "the connection to close")

    async def close(self):
        await asyncio.to_thread(self.connection.close)


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
