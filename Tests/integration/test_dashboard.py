"""The dashboard at `/`: real files embedded in the daemon, live over `/bridge` as a read-only
`observer`, watched in headless Chromium (Selenium). Screenshots go to the test artifacts
(selenium_support.artifacts_dir()).

The observer role itself (what it may and may not do) is tested over plain WebSockets first.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import socket
import statistics
import time

import pytest
from websockets.asyncio.client import connect

import selenium_support
from browser_support import Controller, ProtocolError
from conftest import REPO, http_request

ASSETS = REPO / "Sources" / "BridgeServer" / "Assets" / "dashboard"
needs_browser = pytest.mark.skipif(selenium_support.missing() is not None, reason=selenium_support.missing() or "")


def run(coro, timeout=300):
    return asyncio.run(asyncio.wait_for(coro, timeout))


class Client:
    """A raw protocol connection (page, controller or observer) with an event buffer."""

    def __init__(self, ws):
        self.ws = ws
        self.next_id = 1
        self.events: list[dict] = []

    @classmethod
    async def open(cls, url, **hello):
        client = cls(await connect(url))
        client.hello = await client.call("hello", {"protocol": 1, **hello})
        return client

    async def call(self, method, params=None):
        id_ = self.next_id
        self.next_id += 1
        await self.ws.send(json.dumps({"id": id_, "method": method, "params": params or {}}))
        while True:
            frame = json.loads(await asyncio.wait_for(self.ws.recv(), 15))
            if frame.get("id") == id_:
                return frame
            if "event" in frame:
                self.events.append(frame)

    async def event(self, name, **match):
        for i, frame in enumerate(self.events):
            if frame["event"] == name and all(frame["params"].get(k) == v for k, v in match.items()):
                return self.events.pop(i)
        while True:
            frame = json.loads(await asyncio.wait_for(self.ws.recv(), 15))
            if frame.get("event") == name and all(frame["params"].get(k) == v for k, v in match.items()):
                return frame
            self.events.append(frame)


# ---------------------------------------------------------------------------------------------
# The observer role


def test_observer_may_list_get_and_subscribe_but_never_change_or_see_a_token(daemon):
    async def main():
        obs = await Client.open(daemon.ws_url, role="observer")
        result = obs.hello["result"]
        assert result["protocol"] == 1 and result["observer"].startswith("o") and result["tokenRequired"] is False
        assert (await obs.call("session.subscribe", {}))["result"] == {}
        page = await Client.open(daemon.ws_url, role="page", url="http://127.0.0.1/app/")
        sid = page.hello["result"]["session"]
        await obs.event("stack.changed", session=sid)
        listed = (await obs.call("session.list"))["result"]["sessions"]
        assert [s["session"] for s in listed] == [sid]
        got = (await obs.call("session.get", {"session": sid}))["result"]
        assert [i["id"] for i in got["stack"]] == ["W1"]
        assert "token" not in json.dumps(got)
        assert (await obs.call("navigation.canGoBack", {"session": sid}))["result"] == {"canGoBack": False}
        for method, params in (("navigation.back", {"session": sid}), ("navigation.popToRoot", {"session": sid}),
                               ("session.close", {"session": sid}), ("session.create", {}),
                               ("navigation.navigateToUrl", {"session": sid, "url": "http://127.0.0.1/x"}),
                               ("pwa-navigate", {}), ("router.perform", {"session": sid, "action": "goBack"})):
            reply = await obs.call(method, params)
            assert reply["error"]["code"] == "not-allowed", (method, reply)
        assert (await obs.call("no.such"))["error"]["code"] == "unknown-method"
        assert (await obs.call("hello", {"protocol": 1, "role": "observer"}))["error"]["code"] == "conflict"
        # A classic navigation: controllers get the claim, the observer does not.
        ctl = await Client.open(daemon.ws_url, role="controller")
        await ctl.call("session.subscribe", {"session": sid})
        await page.ws.send(json.dumps({"event": "navigate", "params": {"url": "http://127.0.0.1/app/next"}}))
        opened = (await obs.event("webview.open", session=sid))["params"]
        assert opened == {"session": sid, "webview": "W2", "url": "http://127.0.0.1/app/next"}
        assert "token" in (await ctl.event("webview.open", session=sid))["params"]
        # Nothing changed by the observer: the stack is the page's doing only.
        got = (await obs.call("session.get", {"session": sid}))["result"]
        assert [i["id"] for i in got["stack"]] == ["W1", "W2"]
        bad = await Client.open(daemon.ws_url, role="observer", handles=["navigate"])
        assert bad.hello["error"]["code"] == "invalid-params"

    run(main())


def test_observer_with_a_configured_token(daemon_factory):
    d = daemon_factory("--token", "s3cret")

    async def main():
        # Loopback: allowed without the token (read-only), refused with a wrong one.
        plain = await Client.open(d.ws_url, role="observer")
        assert plain.hello["result"]["tokenRequired"] is True
        wrong = await Client.open(d.ws_url, role="observer", token="nope")
        assert wrong.hello["error"]["code"] == "not-allowed"
        right = await Client.open(d.ws_url, role="observer", token="s3cret")
        assert "result" in right.hello

    run(main())


def non_loopback_address() -> str | None:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))  # no packet is sent; picks the outgoing interface
            address = s.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") else address


@pytest.mark.skipif(non_loopback_address() is None, reason="this machine has no non-loopback IPv4 address")
def test_observer_from_elsewhere_needs_the_token(daemon_factory):
    d = daemon_factory("--host", "0.0.0.0", "--token", "s3cret")
    url = f"ws://{non_loopback_address()}:{d.port}/bridge"

    async def main():
        refused = await Client.open(url, role="observer")
        assert refused.hello["error"]["code"] == "not-allowed"
        allowed = await Client.open(url, role="observer", token="s3cret")
        assert "result" in allowed.hello

    run(main())
