"""bridged: drive the bridged daemon from Python tests and harnesses.

::

    import bridged

    with bridged.Daemon(static="js-client/demo") as d, d.controller() as c:
        s = c.create_session(d.url("/app/astro.html"), browser=True)
        s.click("#astro-deals")
        s.wait_rendered()
        assert s.stack == "P1 W1(*P)"

``Daemon`` starts and stops ``bridged serve``; ``Connection`` is one WebSocket connection of
any role (a page by hand, frames by hand); ``Controller``, a connection that said hello as a
controller, speaks the controller side of the bridge protocol (docs/PROTOCOL.md); ``Session`` drives one session. The pytest plugin
(``bridged.pytest_plugin``, registered as an entry point) adds the fixtures ``bridged_daemon``
and ``bridged_controller``. Everything is synchronous.
"""
from ._connection import DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_BUFFERED_EVENTS, Connection, Event
from ._controller import Controller
from ._daemon import DEFAULT_START_TIMEOUT, DEFAULT_STOP_GRACE, Daemon, find_binary
from ._errors import BridgeError, ConnectionClosed, DaemonError, HandshakeRefused
from ._session import Session
from ._stack import render_stack, stack_ids

__version__ = "0.1.0"

__all__ = [
    "BridgeError",
    "Connection",
    "ConnectionClosed",
    "Controller",
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_MAX_BUFFERED_EVENTS",
    "DEFAULT_START_TIMEOUT",
    "DEFAULT_STOP_GRACE",
    "Daemon",
    "DaemonError",
    "Event",
    "HandshakeRefused",
    "Session",
    "find_binary",
    "render_stack",
    "stack_ids",
]
