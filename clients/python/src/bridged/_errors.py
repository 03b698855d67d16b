"""The exceptions of the bridged client."""
from __future__ import annotations

from typing import Any, Optional


class BridgeError(Exception):
    """An error reply of the daemon: ``{"error": {"code": ..., "message": ...}}``.

    ``code`` is one of the protocol's error codes (docs/PROTOCOL.md section 9: ``invalid-params``,
    ``unknown-session``, ``unknown-webview``, ``conflict``, ``browser-error``, ...), ``message``
    the daemon's explanation, ``method`` the request that failed.
    """

    def __init__(self, code: str, message: str, method: Optional[str] = None, reply: Any = None) -> None:
        self.code = code
        self.message = message
        self.method = method
        self.reply = reply
        where = f"{method}: " if method else ""
        super().__init__(f"{where}{code}: {message}")


class DaemonError(RuntimeError):
    """The daemon could not be found, did not start, or exited before it was healthy.

    ``stderr`` holds what the daemon wrote to its standard error (empty when it never ran).
    """

    def __init__(self, message: str, stderr: str = "", returncode: Optional[int] = None) -> None:
        self.stderr = stderr
        self.returncode = returncode
        super().__init__(message)


class ConnectionClosed(ConnectionError):
    """The daemon closed the controller's connection (``code`` is the WebSocket close code)."""

    def __init__(self, message: str, code: Optional[int] = None) -> None:
        self.code = code
        super().__init__(message)


class HandshakeRefused(ConnectionError):
    """The daemon refused the WebSocket upgrade (a foreign ``Origin``, another path): ``status``
    is the HTTP status of its response (403, 404, ...)."""

    def __init__(self, message: str, status: int) -> None:
        self.status = status
        super().__init__(message)
