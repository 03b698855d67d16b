"""Helpers for the real-browser tests (test_browser.py): headless Chromium driven over the
DevTools protocol (CDP) and a protocol controller (the project's client, through
bridgeclient). The daemon comes from conftest.py.

No selenium: Chromium is started with --remote-debugging-port=0, the port is read from
DevToolsActivePort in its --user-data-dir, and CDP is spoken over one WebSocket in flat
session mode. Every wait here waits for an event (a CDP event, a daemon event, a line of
output) with a deadline; nothing sleeps.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from websockets.asyncio.client import connect as ws_connect  # Chromium's DevTools, not the daemon

from bridgeclient import Conn

REPO = Path(__file__).resolve().parents[2]
DEMO_DIR = REPO / "js-client" / "demo"
WAIT_S = float(os.environ.get("BROWSER_TEST_TIMEOUT_S", "15"))

# The user agent an Astro-aware PWA tests for (/Astro App/): Chromium's --user-agent flag.
ASTRO_USER_AGENT = (
    "Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0 Mobile Safari/537.36 Astro App/1.0"
)


def find_chromium() -> str | None:
    for candidate in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


async def wait_until(predicate: Callable[[], Any], what: str, timeout: float = WAIT_S, *, wake: asyncio.Event) -> Any:
    """Waits until predicate() is truthy, re-checking whenever `wake` is set."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
        wake.clear()
        try:
            await asyncio.wait_for(wake.wait(), remaining)
        except asyncio.TimeoutError:
            pass


# ---------------------------------------------------------------------------------------------
# The controller (a test harness's view of the daemon)


class ProtocolError(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code


class Controller(Conn):
    """A controller connection (the project's client, through bridgeclient): requests that
    return their result (`ProtocolError` for an error reply), and events to wait on, each
    consumed once; `clear()` forgets those received so far."""

    @classmethod
    async def open(cls, ws_url: str, **hello: Any) -> "Controller":
        controller = await super().open(ws_url)
        controller.since = 0  # events before this index of `frames` are forgotten (clear())
        controller.taken: set[int] = set()  # indices of the events wait_event consumed
        await controller.call("hello", {"protocol": 1, "role": "controller", **hello})
        return controller

    async def call(self, method: str, params: dict | None = None) -> dict:
        frame = await self.call_frame(method, params or {}, WAIT_S)
        if "error" in frame:
            raise ProtocolError(frame["error"]["code"], frame["error"].get("message", ""))
        return frame["result"]

    def _unconsumed(self) -> list[tuple[int, dict]]:
        frames = self.frames
        return [(i, frames[i]) for i in range(self.since, len(frames))
                if i not in self.taken and isinstance(frames[i], dict) and "event" in frames[i] and "id" not in frames[i]]

    @property
    def events(self) -> list[dict]:
        """The event frames not yet consumed (since the last `clear()`)."""
        return [f for _, f in self._unconsumed()]

    @property
    def seen(self) -> list[dict]:
        """Every event frame received, for failure messages."""
        return [f for f in list(self.frames) if isinstance(f, dict) and "event" in f and "id" not in f]

    def clear(self) -> None:
        """Forgets the events received so far (call before the action whose events you wait for)."""
        self.since = len(self.frames)

    async def wait_event(self, name: str, timeout: float = WAIT_S, **match: Any) -> dict:
        """Consumes and returns the first event frame `name` whose params contain `match`."""

        def find():
            for i, frame in self._unconsumed():
                params = frame.get("params") or {}
                if frame["event"] == name and all(params.get(k) == v for k, v in match.items()):
                    self.taken.add(i)
                    return frame
            return None

        try:
            return await self._wait(find, timeout, f"event {name} {match}")
        except AssertionError:
            recent = [(f["event"], f.get("params")) for f in self.seen[-12:]]
            raise TimeoutError(f"timed out after {timeout}s waiting for event {name} {match}; "
                               f"last events: {json.dumps(recent)}") from None

    async def stack(self, session: str) -> list[str]:
        result = await self.call("session.get", {"session": session})
        return [item["id"] for item in result["stack"]]


# ---------------------------------------------------------------------------------------------
# Chromium over CDP


class CDPError(Exception):
    pass


class Browser:
    """A headless Chromium; `await Browser.launch()`, then `await browser.new_tab()`."""

    def __init__(self, process: asyncio.subprocess.Process, profile: tempfile.TemporaryDirectory, ws):
        self.process = process
        self.profile = profile
        self.ws = ws
        self.next_id = 1
        self.replies: dict[int, asyncio.Future] = {}
        self.events: list[dict] = []
        self.wake = asyncio.Event()
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def launch(cls, chromium: str, user_agent: str | None = None, extra_args: tuple[str, ...] = ()) -> "Browser":
        profile = tempfile.TemporaryDirectory(prefix="bridged-chromium-")
        args = [
            chromium,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile.name}",
            *([f"--user-agent={user_agent}"] if user_agent else []),
            *extra_args,
            "about:blank",
        ]
        process = await asyncio.create_subprocess_exec(
            *args, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
        )
        # Chromium announces its endpoint on stderr ("DevTools listening on ws://…") once it
        # listens (it writes the same into DevToolsActivePort in the profile).
        deadline = time.monotonic() + WAIT_S
        output: list[str] = []
        while True:
            try:
                raw = await asyncio.wait_for(process.stderr.readline(), max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                process.kill()
                await process.wait()
                raise TimeoutError("chromium did not report its DevTools endpoint") from None
            if not raw:
                await process.wait()
                raise RuntimeError(f"chromium exited with {process.returncode}: {''.join(output)[-2000:]}")
            line = raw.decode(errors="replace")
            output.append(line)
            if "DevTools listening on " in line:
                endpoint = line.split("DevTools listening on ", 1)[1].strip()
                break

        async def drain():  # so that chromium never blocks on a full stderr pipe
            while await process.stderr.readline():
                pass

        drainer = asyncio.create_task(drain())
        ws = await ws_connect(endpoint, max_size=None)
        browser = cls(process, profile, ws)
        browser.drainer = drainer
        return browser

    async def _read(self) -> None:
        async for text in self.ws:
            message = json.loads(text)
            if "id" in message and message["id"] in self.replies:
                self.replies.pop(message["id"]).set_result(message)
            elif "method" in message:
                self.events.append(message)
                self.wake.set()

    async def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        id_ = self.next_id
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.replies[id_] = future
        message = {"id": id_, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        await self.ws.send(json.dumps(message))
        reply = await asyncio.wait_for(future, WAIT_S)
        if "error" in reply:
            raise CDPError(f"{method}: {reply['error']}")
        return reply["result"]

    def mark(self) -> int:
        return len(self.events)

    async def wait_event(self, method: str, since: int, predicate=lambda params: True, timeout: float = WAIT_S) -> dict:
        """A browser-level CDP event (no session) received after `since` (a mark())."""

        def find():
            for message in self.events[since:]:
                if message["method"] == method and "sessionId" not in message and predicate(message.get("params", {})):
                    return message
            return None

        return await wait_until(find, f"CDP {method}", timeout, wake=self.wake)

    async def new_tab(self) -> "Tab":
        target = await self.send("Target.createTarget", {"url": "about:blank"})
        attached = await self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
        tab = Tab(self, attached["sessionId"])
        await tab.send("Page.enable")
        await tab.send("Runtime.enable")
        return tab

    async def close(self) -> None:
        try:
            await self.send("Browser.close")
        except Exception:
            pass
        try:
            await self.ws.close()
        except Exception:
            pass
        self.reader.cancel()
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except asyncio.TimeoutError:
            self.process.kill()
            await self.process.wait()
        self.drainer.cancel()
        self.profile.cleanup()


@dataclass
class Tab:
    browser: Browser
    session: str
    console: list[str] = field(default_factory=list)

    async def send(self, method: str, params: dict | None = None) -> dict:
        return await self.browser.send(method, params, self.session)

    def mark(self) -> int:
        return len(self.browser.events)

    async def wait_cdp_event(self, method: str, since: int, timeout: float = WAIT_S) -> dict:
        def find():
            for message in self.browser.events[since:]:
                if message["method"] == method and message.get("sessionId") == self.session:
                    return message
            return None

        return await wait_until(find, f"CDP {method}", timeout, wake=self.browser.wake)

    async def goto(self, url: str) -> None:
        since = self.mark()
        result = await self.send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise CDPError(f"navigation to {url} failed: {result['errorText']}")
        await self.wait_cdp_event("Page.loadEventFired", since)

    async def eval(self, expression: str) -> Any:
        result = await self.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}
        )
        if "exceptionDetails" in result:
            raise CDPError(f"{expression}: {result['exceptionDetails'].get('exception', result['exceptionDetails'])}")
        return result["result"].get("value")

    async def location(self) -> str:
        return await self.eval("location.href")

    async def click(self, selector: str, **modifiers: bool) -> None:
        """A real (trusted) left click in the middle of the element, as a user's would be."""
        point = await self.eval(
            "(() => { const e = document.querySelector(%s); if (!e) return null;"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()" % json.dumps(selector)
        )
        if point is None:
            raise CDPError(f"no element {selector} in {await self.location()}")
        flags = (1 if modifiers.get("alt") else 0) | (2 if modifiers.get("ctrl") else 0) | (
            4 if modifiers.get("meta") else 0) | (8 if modifiers.get("shift") else 0)
        x, y = point
        base = {"x": x, "y": y, "button": "left", "clickCount": 1, "modifiers": flags}
        await self.send("Input.dispatchMouseEvent", {**base, "type": "mouseMoved", "button": "none"})
        await self.send("Input.dispatchMouseEvent", {**base, "type": "mousePressed"})
        await self.send("Input.dispatchMouseEvent", {**base, "type": "mouseReleased"})
