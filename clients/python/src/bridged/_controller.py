"""A synchronous controller connection to bridged (docs/PROTOCOL.md section 6)."""
from __future__ import annotations

import collections
import json
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Deque, Dict, List, Mapping, Optional, Set, Tuple

from websockets.exceptions import ConnectionClosed as _WSClosed
from websockets.sync.client import connect as _ws_connect

from ._errors import BridgeError, ConnectionClosed

if TYPE_CHECKING:
    from ._session import Session

#: How many unconsumed events a controller keeps by default (see ``Controller``).
DEFAULT_MAX_BUFFERED_EVENTS = 10_000
#: How long ``Controller.call`` waits for a reply by default, in seconds. Browser calls answer
#: within the daemon's own 15 s DevTools timeout; a first browser session also starts Chromium.
DEFAULT_CALL_TIMEOUT = 60.0


class Event:
    """One event frame: ``name``, ``params`` and ``seq``, its position among the frames received."""

    __slots__ = ("name", "params", "seq")

    def __init__(self, name: str, params: Dict[str, Any], seq: int) -> None:
        self.name = name
        self.params = params
        self.seq = seq

    def __repr__(self) -> str:
        return f"Event({self.name!r}, {self.params!r})"


def _matches(params: Mapping[str, Any], match: Mapping[str, Any]) -> bool:
    for key, want in match.items():
        if key not in params:
            return False
        have = params[key]
        if callable(want):
            if not want(have):
                return False
        elif have != want:
            return False
    return True


class Controller:
    """A controller connection: requests, their replies, and a buffer of the events received.

    ``Controller(ws_url)`` connects to ``ws://HOST:PORT/bridge``, says ``hello`` as a controller
    (with ``token`` when the daemon has one) and, with ``subscribe=True`` (the default),
    subscribes to the events of every session, present and future. Sessions it creates with
    ``create_session`` are subscribed to in any case (the daemon subscribes their creator).

    **Events.** Every event received is kept in a buffer until a ``wait_event`` consumes it, so
    an event that arrived before the wait (say, during the ``call`` that caused it) is never
    missed. The buffer holds at most ``max_buffered_events`` (default 10,000) events; when it is
    full the oldest event is dropped and ``dropped_events`` counts it.

    **Threads.** The connection is synchronous: frames are read while a call or a wait runs.
    One lock serialises the calls, so a controller may be shared between threads, but each call
    waits for the one before it. Pings of the daemon are answered in the background by
    ``websockets``.

    Use it as a context manager, or call ``close()``: closing also closes the sessions this
    controller created with ``create_session`` (unless ``close_sessions=False``), so that a test
    leaves no browser tab behind.
    """

    def __init__(
        self,
        url: str,
        token: Optional[str] = None,
        *,
        subscribe: bool = True,
        handles: Optional[List[str]] = None,
        timeout: float = DEFAULT_CALL_TIMEOUT,
        max_buffered_events: int = DEFAULT_MAX_BUFFERED_EVENTS,
        connect_timeout: float = 10.0,
    ) -> None:
        if max_buffered_events < 1:
            raise ValueError(f"max_buffered_events must be at least 1, not {max_buffered_events}")
        self.url = url
        #: The default reply timeout of ``call`` in seconds.
        self.timeout = timeout
        #: The most events kept unconsumed; the oldest is dropped past it.
        self.max_buffered_events = max_buffered_events
        #: How many events were dropped because the buffer was full.
        self.dropped_events = 0
        self._lock = threading.RLock()
        self._next_id = 1
        self._seq = 0
        self._events: Deque[Event] = collections.deque()
        self._replies: Dict[int, Tuple[Dict[str, Any], int]] = {}
        self._abandoned: Set[int] = set()
        self._sessions: List["Session"] = []
        self._closed: Optional[ConnectionClosed] = None
        # `.__enter__()`: the connection itself, whether connect() returns it (websockets < 18)
        # or a context manager that makes it (the behaviour websockets 17.1 announces).
        self._ws = _ws_connect(url, max_size=None, compression=None, open_timeout=connect_timeout).__enter__()
        try:
            params: Dict[str, Any] = {"protocol": 1, "role": "controller"}
            if token:
                params["token"] = token
            if handles:
                params["handles"] = list(handles)
            #: The ``hello`` result: ``{"protocol", "controller", "version", ...}``.
            self.hello: Dict[str, Any] = self.request("hello", params)
            if subscribe:
                self.request("session.subscribe", {})
        except BaseException:
            self._ws.close()
            raise

    # -- requests -------------------------------------------------------------------------------

    def call(self, method: str, /, **params: Any) -> Any:
        """Sends request ``method`` with ``params`` and returns its result.

        Raises ``BridgeError`` (with ``.code`` and ``.message``) for an error reply,
        ``TimeoutError`` when no reply comes within ``self.timeout`` seconds, and
        ``ConnectionClosed`` when the daemon closed the connection.
        ``call("session.get", session=sid)`` sends ``{"method":"session.get","params":{"session":sid}}``.
        """
        return self.request(method, params)

    def request(self, method: str, params: Optional[Mapping[str, Any]] = None, *, timeout: Optional[float] = None) -> Any:
        """``call`` with the params as a mapping and a timeout of its own (seconds)."""
        return self._request(method, params, timeout)[0]

    def _request(self, method: str, params: Optional[Mapping[str, Any]], timeout: Optional[float]) -> Tuple[Any, int]:
        """The result, and the sequence number of the last event received before the reply."""
        with self._lock:
            rid = self._next_id
            self._next_id += 1
            frame: Dict[str, Any] = {"id": rid, "method": method}
            if params:
                frame["params"] = dict(params)
            self._send(frame)
            deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
            while rid not in self._replies:
                if not self._read(deadline):
                    self._abandoned.add(rid)  # its reply, if it ever comes, is dropped
                    raise TimeoutError(f"{method}: no reply within {self.timeout if timeout is None else timeout} s")
            reply, seq = self._replies.pop(rid)
        if "error" in reply:
            error = reply["error"] if isinstance(reply["error"], dict) else {}
            raise BridgeError(str(error.get("code", "internal")), str(error.get("message", "")), method, reply)
        return reply.get("result"), seq

    def _send(self, frame: Mapping[str, Any]) -> None:
        if self._closed is not None:
            raise self._closed
        try:
            self._ws.send(json.dumps(frame))
        except _WSClosed as e:
            self._closed = ConnectionClosed(f"the daemon closed the connection ({e})", getattr(e.rcvd, "code", None))
            raise self._closed from e

    def _read(self, deadline: float) -> bool:
        """Reads one frame into the replies or the event buffer; False when the deadline passed."""
        if self._closed is not None:
            raise self._closed
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        try:
            text = self._ws.recv(timeout=remaining)
        except TimeoutError:
            return False
        except _WSClosed as e:
            self._closed = ConnectionClosed(f"the daemon closed the connection ({e})", getattr(e.rcvd, "code", None))
            raise self._closed from e
        frame = json.loads(text)
        if not isinstance(frame, dict):
            return True
        if "event" in frame and "id" not in frame:
            self._seq += 1
            params = frame.get("params")
            self._events.append(Event(str(frame["event"]), params if isinstance(params, dict) else {}, self._seq))
            if len(self._events) > self.max_buffered_events:
                self._events.popleft()
                self.dropped_events += 1
        elif isinstance(frame.get("id"), int) and ("result" in frame or "error" in frame):
            if frame["id"] in self._abandoned:
                self._abandoned.discard(frame["id"])
            else:
                self._replies[frame["id"]] = (frame, self._seq)
        return True

    # -- events ---------------------------------------------------------------------------------

    def wait_event(self, name: str, /, timeout: float = 5, **match: Any) -> Dict[str, Any]:
        """Waits for an event called ``name`` whose params match ``match``; returns its params.

        The oldest matching event in the buffer is taken first (and removed from it): events that
        arrived before this call and were not consumed by an earlier wait count. A ``match``
        value is compared with ``==``, or called with the param's value when it is callable:
        ``wait_event("stack.changed", session=s.id, cause="pwa-navigate")``,
        ``wait_event("foreground.removed", latencyMs=lambda ms: ms < 500)``.
        Raises ``TimeoutError`` after ``timeout`` seconds, naming the events that did arrive.
        """
        with self._lock:
            deadline = time.monotonic() + timeout
            while True:
                for event in self._events:
                    if event.name == name and _matches(event.params, match):
                        self._events.remove(event)
                        return event.params
                if not self._read(deadline):
                    seen = ", ".join(f"{e.name} {e.params}" for e in list(self._events)[-5:]) or "none"
                    raise TimeoutError(f"no event {name!r} matching {match!r} within {timeout} s; the last unconsumed events: {seen}")

    def events(self, name: Optional[str] = None) -> List[Event]:
        """The unconsumed events in the buffer (of one name, or all), oldest first; reads nothing."""
        with self._lock:
            return [e for e in self._events if name is None or e.name == name]

    def drain(self) -> List[Event]:
        """Reads every frame already received, then empties the buffer; returns what it held."""
        with self._lock:
            while self._read(time.monotonic() + 0.001):
                pass
            out = list(self._events)
            self._events.clear()
            return out

    def _wait_seen(self, predicate: Callable[[Event], bool], after: int, deadline: float) -> Optional[Event]:
        """An event after sequence number ``after`` that satisfies ``predicate``, left in the
        buffer; None when the deadline passes first."""
        with self._lock:
            checked = after
            while True:
                for event in self._events:
                    if event.seq > checked and predicate(event):
                        return event
                checked = max(checked, self._seq)
                if not self._read(deadline):
                    return None

    # -- sessions -------------------------------------------------------------------------------

    def create_session(self, url: str, browser: bool = False, **params: Any) -> "Session":
        """Creates a session (``session.create``) and returns it as a ``Session``.

        With ``browser=True`` bridged opens ``url`` in a Chromium tab it drives
        (docs/BROWSER.md); for an http(s) ``url`` this returns once that tab's page has
        connected (``page.connected`` for ``W1``, left in the event buffer) and its document
        has loaded, so that ``click``, ``type`` and ``evaluate`` find the page and its scripts.
        Other ``params`` are sent as they are.
        """
        from ._session import Session

        body: Dict[str, Any] = {"url": url, **params}
        if browser:
            body["browser"] = True
        with self._lock:
            before = self._seq
            result, _ = self._request("session.create", body, None)
        session = Session(self, result)
        self._sessions.append(session)
        if browser and url.startswith(("http:", "https:")):
            sid = session.id
            deadline = time.monotonic() + self.timeout
            if self._wait_seen(lambda e: e.name == "page.connected" and e.params.get("session") == sid
                               and e.params.get("webview") == "W1", before, deadline) is None:
                raise TimeoutError(f"the page of browser session {sid} did not connect within {self.timeout} s")
            session.wait_loaded("W1", timeout=self.timeout)
        return session

    def session(self, session_id: str) -> "Session":
        """A ``Session`` for an existing session id (one a page started, say)."""
        from ._session import Session

        result = self.call("session.get", session=session_id)
        return Session(self, {"session": session_id, "browser": None}, result)

    # -- closing --------------------------------------------------------------------------------

    def close(self, close_sessions: bool = True) -> None:
        """Closes the sessions this controller created (unless told not to), then the connection."""
        with self._lock:
            if close_sessions and self._closed is None:
                for session in self._sessions:
                    try:
                        session.close()
                    except (BridgeError, ConnectionError, TimeoutError):
                        pass
            self._sessions.clear()
            self._ws.close()
            if self._closed is None:
                self._closed = ConnectionClosed("the controller was closed")

    def __enter__(self) -> "Controller":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
