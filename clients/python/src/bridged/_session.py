"""One session of bridged, driven by a controller."""
from __future__ import annotations

import base64
import json
import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from ._errors import BridgeError
from ._stack import render_stack

if TYPE_CHECKING:
    from ._controller import Controller, Event

# Evaluated in the top web view by `wait_rendered` (browser sessions): once the document has
# loaded, one `ping` over the page's own bridge connection. Replies on a connection come in
# request order, so when the ping is answered the daemon has handled every request the page sent
# before it (a `pwa-navigate` sent by a click handler, say), and has sent the events those caused
# to this controller before the evaluate's reply. Bounded in the page by BARRIER_MS.
_BARRIER = """(async () => {
  await new Promise((resolve) => document.readyState === "complete" ? resolve() : addEventListener("load", resolve, {once: true}));
  const injected = window.__bridgedInjected;
  if (!injected || !injected.bridge || injected.bridge.state === "closed") return false;
  await Promise.race([injected.bridge.request("ping", {}).catch(() => null),
                      new Promise((resolve) => setTimeout(resolve, %d))]);
  return true;
})()"""

_LOADED = """new Promise((resolve) => document.readyState === "complete" ? resolve(true)
  : addEventListener("load", () => resolve(true), {once: true}))"""


class Session:
    """A session (``session.create``'s result), driven through its ``Controller``.

    ``id`` is the session id; ``created`` is ``session.create``'s result (``webview``, ``token``,
    ``pageUrl``, ``browser``). ``click``, ``type``, ``evaluate`` and ``screenshot`` need a browser
    session (``create_session(url, browser=True)``); the others work on any session.
    ``webview=None`` means the top web view of the stack (the topmost item that is a web view).
    A ``Session`` is a context manager that closes the session on exit.
    """

    def __init__(self, controller: "Controller", created: Dict[str, Any], state: Optional[Dict[str, Any]] = None) -> None:
        self.controller = controller
        self.created = created
        self.id: str = str(created["session"])
        #: True for a browser session, False for a plain one, None when not known (``Controller.session``).
        self.browser: Optional[bool] = created["browser"] if "browser" in created else False
        self._state = state

    def __repr__(self) -> str:
        return f"Session({self.id!r})"

    def get(self) -> Dict[str, Any]:
        """``session.get``: ``{"session", "stack", "foreground", "handlers", "canGoBack"}``."""
        state: Dict[str, Any] = self.controller.call("session.get", session=self.id)
        return state

    @property
    def items(self) -> List[Dict[str, Any]]:
        """The stack's items as the daemon sends them, bottom first."""
        return list(self.get()["stack"])

    @property
    def stack(self) -> str:
        """The stack now, in the seed's notation: ``"P1 W1(*P) W2(*C)"`` (``~``: no page connected)."""
        return render_stack(self.get()["stack"])

    @property
    def top_webview(self) -> str:
        """The id of the topmost web view on the stack (``W1``, ...)."""
        return self._top_webview(self.get()["stack"])

    def _top_webview(self, items: List[Dict[str, Any]]) -> str:
        for item in reversed(items):
            if item.get("kind") == "webview":
                return str(item["id"])
        raise BridgeError("unknown-webview", f"session {self.id} has no web view on its stack")

    def _webview(self, webview: Optional[str]) -> str:
        return webview if webview is not None else self.top_webview

    # -- the browser (browser sessions) ---------------------------------------------------------

    def click(self, selector: str, webview: Optional[str] = None) -> None:
        """A real mouse click in the middle of the first element matching ``selector``."""
        self.controller.call("webview.click", session=self.id, webview=self._webview(webview), selector=selector)

    def type(self, selector: str, text: str, webview: Optional[str] = None) -> None:
        """Focuses the first element matching ``selector`` and types ``text`` into it."""
        self.controller.call("webview.type", session=self.id, webview=self._webview(webview), selector=selector, text=text)

    def evaluate(self, expr: str, webview: Optional[str] = None) -> Any:
        """The value of a JavaScript expression in the page, as JSON (a promise is awaited)."""
        result = self.controller.call("webview.evaluate", session=self.id, webview=self._webview(webview), expression=expr)
        return result.get("value")

    def screenshot(self) -> bytes:
        """The screen as the user sees it now (the top web view, foreground included), as JPEG bytes."""
        result = self.controller.call("session.screenshot", session=self.id)
        if result.get("mimeType") != "image/jpeg":
            raise BridgeError("internal", f"a screenshot of type {result.get('mimeType')!r}", "session.screenshot")
        return base64.b64decode(result["data"])

    def wait_loaded(self, webview: Optional[str] = None, timeout: float = 15) -> None:
        """Waits until the document of a web view (the top one by default) has loaded (its ``load``
        event), so that its own scripts have run."""
        self.controller.request("webview.evaluate", {"session": self.id, "webview": self._webview(webview),
                                                     "expression": _LOADED}, timeout=timeout)

    # -- navigation -----------------------------------------------------------------------------

    def back(self) -> Dict[str, Any]:
        """``navigation.back``: ``{"action": "swap"|"pop"|"none", "removed", "stack"}``."""
        result: Dict[str, Any] = self.controller.call("navigation.back", session=self.id)
        return result

    def navigate(self, url: str) -> Dict[str, Any]:
        """``navigation.navigateToUrl``: pushes a new classic web view for ``url``
        (``{"webview", "token", "pageUrl", "stack"}``); in a browser session, a new tab."""
        result: Dict[str, Any] = self.controller.call("navigation.navigateToUrl", session=self.id, url=url)
        return result

    def wait_rendered(self, timeout: float = 5) -> Dict[str, Any]:
        """Waits until no foreground is up over the session; returns ``session.get``'s result then.

        A foreground is up from a ``pwa-navigate`` (or a back-swap) until the page's
        ``pwa-rendered`` or the fallback timer, and its end is the event ``foreground.removed``:
        this waits for that event, not by polling. In a browser session it first makes sure the
        daemon has handled what the top page already sent (a ``pwa-navigate`` sent by the click
        handler that ``click`` just ran): it waits for the document's ``load``, then sends one
        ``ping`` over the page's own connection and waits for its reply (replies come in request
        order). A PWA that sends ``pwa-navigate`` later than that (after a timer, a fetch) is
        not waited for: wait for its ``stack.changed`` with ``wait_event`` first.
        Raises ``TimeoutError`` when a foreground is still up after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        if self.browser is not False:
            ms = max(1, int(timeout * 1000))
            try:
                self.controller.request("webview.evaluate", {"session": self.id, "webview": self.top_webview,
                                                             "expression": _BARRIER % ms}, timeout=timeout + 5)
            except BridgeError:
                pass  # not a browser session, or no page to ask: the daemon's state is all there is
        ctl = self.controller
        while True:
            state: Dict[str, Any]
            state, seq = ctl._request("session.get", {"session": self.id}, None)
            foreground = state.get("foreground")
            if foreground is None:
                self._state = state
                return state
            sid = self.id
            if ctl._wait_seen(lambda e: e.name in ("foreground.removed", "session.closed") and e.params.get("session") == sid,
                              seq, deadline) is None:
                raise TimeoutError(f"session {sid}: a foreground is still up after {timeout} s: {json.dumps(foreground)}; "
                                   f"stack {render_stack(state.get('stack', []))}")

    # -- events ---------------------------------------------------------------------------------

    def events(self, name: Optional[str] = None) -> List["Event"]:
        """The controller's unconsumed events of this session (of one name, or all), oldest
        first; reads nothing (``Controller.events``)."""
        return [e for e in self.controller.events(name) if e.params.get("session") == self.id]

    def wait_event(self, name: str, timeout: float = 5, **match: Any) -> Dict[str, Any]:
        """``Controller.wait_event`` for this session's events: the params of the oldest event
        ``name`` of this session whose params match ``match``."""
        return self.controller.wait_event(name, timeout=timeout, session=self.id, **match)

    # -- closing --------------------------------------------------------------------------------

    def close(self) -> None:
        """``session.close``: every page is told and closed; a browser session's tabs close.
        Closing a session that is already gone does nothing."""
        try:
            self.controller.call("session.close", session=self.id)
        except BridgeError as e:
            if e.code != "unknown-session":
                raise

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
