"""One WebSocket connection to bridged, of any role: the transport under ``Controller``."""
from __future__ import annotations

import collections
import json
import threading
import time
from typing import Any, Callable, Deque, Dict, Iterable, List, Mapping, Optional, Set, Tuple, Union

from websockets.exceptions import ConnectionClosed as _WSClosed
from websockets.exceptions import InvalidStatus as _WSInvalidStatus
from websockets.sync.client import connect as _ws_connect

from ._errors import BridgeError, ConnectionClosed, HandshakeRefused

#: How many unconsumed events a connection keeps by default.
DEFAULT_MAX_BUFFERED_EVENTS = 10_000
#: How long a request waits for its reply by default, in seconds. Browser calls answer within
#: the daemon's own 15 s DevTools timeout; a first browser session also starts Chromium.
DEFAULT_CALL_TIMEOUT = 60.0

#: What a connection received: a JSON value (usually a dict: a reply or an event), or, for a
#: frame that is not JSON, its text (``str``) or its bytes (a binary frame).
Frame = Union[Dict[str, Any], List[Any], str, bytes, int, float, None]
_NOT_JSON = object()


class Event:
    """One event frame: ``name``, ``params`` and ``seq``, its position among the events received."""

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


class Connection:
    """A WebSocket connection to ``ws://HOST:PORT/bridge`` that has not said ``hello`` yet.

    A thread of its own reads every frame as it arrives: replies are kept by request id until
    their request takes them, events go to a buffer of at most ``max_buffered_events`` (the
    oldest is dropped past it, counted in ``dropped_events``) until a ``wait_event`` takes them.
    Requests may be sent from several threads at once; each waits for its own reply.

    ``say_hello(role, **params)`` says hello as a ``"page"`` or a ``"controller"``; ``request``
    sends a request and returns its result (``BridgeError`` for an error reply), ``call_frame``
    returns the whole reply frame instead. ``send``, ``send_text`` and ``send_bytes`` send
    anything (a frame by hand, text that is not JSON, a binary frame); ``close_code`` is the
    close code once the connection is closed (``wait_closed`` waits for it). A refused upgrade
    raises ``HandshakeRefused`` (with the HTTP ``status``).

    ``record=True`` also keeps every frame received, in order, in ``frames`` (for tests that
    look at the exact frames: an error reply without id, a binary frame). ``listener`` is
    called, on the reader thread, with each frame received (``None`` once the connection has
    closed): a way to wake an event loop. ``origin`` and ``headers`` go into the WebSocket
    handshake.
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = DEFAULT_CALL_TIMEOUT,
        connect_timeout: float = 10.0,
        max_buffered_events: int = DEFAULT_MAX_BUFFERED_EVENTS,
        record: bool = False,
        listener: Optional[Callable[[Frame], None]] = None,
        origin: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        max_size: Optional[int] = None,
    ) -> None:
        if max_buffered_events < 1:
            raise ValueError(f"max_buffered_events must be at least 1, not {max_buffered_events}")
        self.url = url
        #: The default reply timeout of a request, in seconds.
        self.timeout = timeout
        #: The most events kept unconsumed; the oldest is dropped past it.
        self.max_buffered_events = max_buffered_events
        #: How many events were dropped because the buffer was full.
        self.dropped_events = 0
        #: Every frame received, in order (only with ``record=True``).
        self.frames: List[Frame] = []
        #: The ``hello`` result once ``hello`` succeeded.
        self.hello_result: Optional[Dict[str, Any]] = None
        self._record = record
        self._listener = listener
        self._cond = threading.Condition()
        self._next_id = 1
        self._seq = 0
        self._events: Deque[Event] = collections.deque()
        self._replies: Dict[Any, Tuple[Dict[str, Any], int]] = {}
        self._abandoned: Set[int] = set()
        self._closed: Optional[ConnectionClosed] = None
        self._closing = False
        self._close_code: Optional[int] = None
        extra: Dict[str, Any] = {}
        if origin is not None:
            extra["origin"] = origin
        if headers:
            extra["additional_headers"] = dict(headers)
        # `.__enter__()`: the connection itself, whether connect() returns it (websockets < 18)
        # or a context manager that makes it (the behaviour websockets 17.1 announces).
        try:
            self._ws = _ws_connect(url, max_size=max_size, compression=None, open_timeout=connect_timeout,
                                   **extra).__enter__()
        except _WSInvalidStatus as e:
            status = e.response.status_code
            raise HandshakeRefused(f"{url}: the WebSocket upgrade was refused with HTTP {status}", status) from None
        self._reader = threading.Thread(target=self._read_all, name=f"bridged-reader {url}", daemon=True)
        self._reader.start()

    # -- reading --------------------------------------------------------------------------------

    def _read_all(self) -> None:
        try:
            for message in self._ws:
                self._dispatch(message)
        except _WSClosed:
            pass
        except Exception as e:  # a broken frame or socket: the connection is over all the same
            with self._cond:
                self._closed = ConnectionClosed(f"reading the connection failed: {e!r}")
        finally:
            code = self._ws.close_code
            with self._cond:
                self._close_code = code if code is not None else 1006
                if self._closed is None:
                    self._closed = (ConnectionClosed("the connection was closed", self._close_code) if self._closing else
                                    ConnectionClosed(f"the daemon closed the connection (code {self._close_code})",
                                                     self._close_code))
                self._cond.notify_all()
            self._notify(None)

    def _dispatch(self, message: Union[str, bytes]) -> None:
        frame: Any = message
        if isinstance(message, str):
            try:
                frame = json.loads(message)
            except ValueError:
                frame = message
        with self._cond:
            if self._record:
                self.frames.append(frame)
            if isinstance(frame, dict):
                if "event" in frame and "id" not in frame:
                    self._seq += 1
                    params = frame.get("params")
                    self._events.append(Event(str(frame["event"]), params if isinstance(params, dict) else {}, self._seq))
                    if len(self._events) > self.max_buffered_events:
                        self._events.popleft()
                        self.dropped_events += 1
                elif "id" in frame and ("result" in frame or "error" in frame):
                    rid = frame["id"]
                    if isinstance(rid, int) and rid in self._abandoned:
                        self._abandoned.discard(rid)
                    elif rid is not None and not isinstance(rid, (dict, list)):
                        self._replies.setdefault(rid, (frame, self._seq))
            self._cond.notify_all()
        self._notify(frame)

    def _notify(self, frame: Frame) -> None:
        if self._listener is not None:
            try:
                self._listener(frame)
            except Exception:
                pass  # a listener's failure must not stop the reading

    def _wait(self, predicate: Callable[[], Any], deadline: float, stop_on_close: bool = True) -> Any:
        """Waits (holding the condition) until ``predicate()`` is not None; None when the deadline
        passes first. Raises ``ConnectionClosed`` once the connection has closed, if asked."""
        with self._cond:
            while True:
                value = predicate()
                if value is not None:
                    return value
                if stop_on_close and self._closed is not None:
                    raise self._closed
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._cond.wait(remaining)

    # -- sending --------------------------------------------------------------------------------

    def send(self, frame: Any) -> None:
        """Sends ``frame`` as JSON text, as it is."""
        self.send_text(json.dumps(frame))

    def send_text(self, text: str) -> None:
        """Sends a text frame (JSON or not)."""
        self._send(text)

    def send_bytes(self, data: bytes) -> None:
        """Sends a binary frame."""
        self._send(bytes(data))

    def send_fragments(self, parts: Iterable[Union[str, bytes]]) -> None:
        """Sends one message in several frames, a fragment per part (all ``str``: a text message,
        all ``bytes``: a binary one)."""
        self._send(list(parts))

    def _send(self, message: Union[str, bytes, List[Any]]) -> None:
        if self._closed is not None:
            raise self._closed
        try:
            self._ws.send(message)
        except _WSClosed as e:
            code = getattr(e.rcvd, "code", None)
            with self._cond:
                if self._closed is None:
                    self._closed = ConnectionClosed(f"the daemon closed the connection ({e})", code)
            raise ConnectionClosed(f"the daemon closed the connection ({e})", code) from e

    def next_request_id(self) -> int:
        """A request id that no other request of this connection has used."""
        with self._cond:
            rid = self._next_id
            self._next_id += 1
            return rid

    # -- requests -------------------------------------------------------------------------------

    def send_request(self, method: str, params: Optional[Mapping[str, Any]] = None) -> int:
        """Sends request ``method`` (with ``params`` when given, even empty) and returns its id;
        ``take_reply`` or ``wait_reply`` gets the reply."""
        rid = self.next_request_id()
        frame: Dict[str, Any] = {"id": rid, "method": method}
        if params is not None:
            frame["params"] = dict(params)
        self.send(frame)
        return rid

    def take_reply(self, rid: Any) -> Optional[Dict[str, Any]]:
        """The reply frame of request ``rid`` if it has come (taken: a second call returns None)."""
        with self._cond:
            got = self._replies.pop(rid, None)
            return got[0] if got is not None else None

    def wait_reply(self, rid: Any, timeout: Optional[float] = None, what: str = "") -> Tuple[Dict[str, Any], int]:
        """Waits for the reply frame of request ``rid``; returns it and the sequence number of the
        last event received before it. ``TimeoutError`` after ``timeout`` seconds (the reply,
        if it comes later, is dropped), ``ConnectionClosed`` if the connection closes first."""
        limit = self.timeout if timeout is None else timeout
        got = self._wait(lambda: self._replies.pop(rid, None), time.monotonic() + limit)
        if got is None:
            with self._cond:
                got = self._replies.pop(rid, None)
                if got is None:
                    if isinstance(rid, int):
                        self._abandoned.add(rid)
                    raise TimeoutError(f"{what or f'request {rid}'}: no reply within {limit} s")
        return got

    def call_frame(self, method: str, params: Optional[Mapping[str, Any]] = None, *,
                   timeout: Optional[float] = None) -> Dict[str, Any]:
        """Sends a request and returns its whole reply frame, a result or an error."""
        rid = self.send_request(method, params)
        return self.wait_reply(rid, timeout, method)[0]

    def request(self, method: str, params: Optional[Mapping[str, Any]] = None, *, timeout: Optional[float] = None) -> Any:
        """Sends request ``method`` with ``params`` and returns its result. Raises ``BridgeError``
        (``.code``, ``.message``) for an error reply, ``TimeoutError`` when no reply comes within
        ``timeout`` seconds (default ``self.timeout``), ``ConnectionClosed`` if the daemon closed
        the connection."""
        return self._request(method, params, timeout)[0]

    def _request(self, method: str, params: Optional[Mapping[str, Any]], timeout: Optional[float]) -> Tuple[Any, int]:
        """The result, and the sequence number of the last event received before the reply."""
        rid = self.send_request(method, params if params else None)
        reply, seq = self.wait_reply(rid, timeout, method)
        if "error" in reply:
            error = reply["error"] if isinstance(reply["error"], dict) else {}
            raise BridgeError(str(error.get("code", "internal")), str(error.get("message", "")), method, reply)
        return reply.get("result"), seq

    def call(self, method: str, /, **params: Any) -> Any:
        """``request`` with the params as keywords: ``call("session.get", session=sid)``."""
        return self.request(method, params)

    def say_hello(self, role: str, *, timeout: Optional[float] = None, **params: Any) -> Dict[str, Any]:
        """Says ``hello`` as ``role`` (``"page"``, ``"controller"``) with protocol 1 and ``params``
        (``url``, ``token``, ``session``, ``handles``, ...); returns its result."""
        body: Dict[str, Any] = {"protocol": 1, "role": role}
        body.update({k: v for k, v in params.items() if v is not None})
        self.hello_result = self.request("hello", body, timeout=timeout)
        return self.hello_result

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

        def take() -> Optional[Dict[str, Any]]:
            for event in self._events:
                if event.name == name and _matches(event.params, match):
                    self._events.remove(event)
                    return event.params
            return None

        got = self._wait(take, time.monotonic() + timeout)
        if got is None:
            with self._cond:
                seen = ", ".join(f"{e.name} {e.params}" for e in list(self._events)[-5:]) or "none"
            raise TimeoutError(f"no event {name!r} matching {match!r} within {timeout} s; the last unconsumed events: {seen}")
        return got

    def events(self, name: Optional[str] = None) -> List[Event]:
        """The unconsumed events in the buffer (of one name, or all), oldest first."""
        with self._cond:
            return [e for e in self._events if name is None or e.name == name]

    def drain(self) -> List[Event]:
        """Empties the event buffer; returns what it held."""
        with self._cond:
            out = list(self._events)
            self._events.clear()
            return out

    def _wait_seen(self, predicate: Callable[[Event], bool], after: int, deadline: float) -> Optional[Event]:
        """An event after sequence number ``after`` that satisfies ``predicate``, left in the
        buffer; None when the deadline passes first."""

        def find() -> Optional[Event]:
            for event in self._events:
                if event.seq > after and predicate(event):
                    return event
            return None

        return self._wait(find, deadline)

    # -- closing --------------------------------------------------------------------------------

    @property
    def close_code(self) -> Optional[int]:
        """The WebSocket close code once the connection has closed (1006: closed without a close
        frame), None while it is open."""
        with self._cond:
            return self._close_code

    def wait_closed(self, timeout: float = 5) -> int:
        """Waits until the connection has closed (the daemon closed it, say); its close code."""
        code = self._wait(lambda: self._close_code, time.monotonic() + timeout, stop_on_close=False)
        if code is None:
            raise TimeoutError(f"the connection is still open after {timeout} s")
        return code

    def close(self) -> None:
        """Closes the connection (a close frame with 1000) and waits briefly for the reader."""
        with self._cond:
            self._closing = True
        self._ws.close()
        self._reader.join(5)
        with self._cond:
            if self._closed is None:
                self._closed = ConnectionClosed("the connection was closed")

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
