"""A synchronous controller connection to bridged (docs/PROTOCOL.md section 6)."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from ._connection import DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_BUFFERED_EVENTS, Connection, Event
from ._errors import BridgeError

if TYPE_CHECKING:
    from ._session import Session

__all__ = ["Controller", "Event", "DEFAULT_CALL_TIMEOUT", "DEFAULT_MAX_BUFFERED_EVENTS"]


class Controller(Connection):
    """A controller connection: requests, their replies, and a buffer of the events received.

    ``Controller(ws_url)`` connects to ``ws://HOST:PORT/bridge``, says ``hello`` as a controller
    (with ``token`` when the daemon has one) and, with ``subscribe=True`` (the default),
    subscribes to the events of every session, present and future. Sessions it creates with
    ``create_session`` are subscribed to in any case (the daemon subscribes their creator).

    **Events.** Every event received is kept in a buffer until a ``wait_event`` consumes it, so
    an event that arrived before the wait (say, during the ``call`` that caused it) is never
    missed. The buffer holds at most ``max_buffered_events`` (default 10,000) events; when it is
    full the oldest event is dropped and ``dropped_events`` counts it.

    **Threads.** The calls are synchronous; a thread of the connection reads the frames as they
    arrive (``Connection``), so a controller may be shared between threads, each call waiting for
    its own reply. Pings of the daemon are answered in the background by ``websockets``.

    Other keyword arguments go to ``Connection`` (``origin``, ``headers``, ``record``, ...).

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
        **connection: Any,
    ) -> None:
        super().__init__(url, timeout=timeout, max_buffered_events=max_buffered_events,
                         connect_timeout=connect_timeout, **connection)
        self._sessions: List["Session"] = []
        try:
            #: The ``hello`` result: ``{"protocol", "controller", "version", ...}``.
            self.hello: Dict[str, Any] = self.say_hello("controller", token=token or None,
                                                        handles=list(handles) if handles else None)
            if subscribe:
                self.request("session.subscribe", {})
        except BaseException:
            self._ws.close()
            raise

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
        with self._cond:
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
        if close_sessions and self._closed is None:
            for session in self._sessions:
                try:
                    session.close()
                except (BridgeError, ConnectionError, TimeoutError):
                    pass
        self._sessions.clear()
        Connection.close(self)

    def __enter__(self) -> "Controller":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
