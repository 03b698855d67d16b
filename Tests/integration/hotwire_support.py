"""Shared helpers of the hotwire-native session tests (test_hotwire.py, test_hotwire_snapshots.py,
test_issue21_contract.py, test_hotwire8.py): the test apps, a fixture serving one, a session
started on one, and the waits on the adapter's messages and the session's tree.

- `hotwire_app`: the Turbo 7.1 app module (Tests/integration/hotwire_app/server.py).
- `app_fixture(scope, start=..., name="app")`: a pytest fixture yielding the base URL of an app
  started by `start()` (default: the Turbo 7.1 app), shut down after its scope. Bind it in a
  test module: `app = app_fixture("module")`.
- `start(c, base, platform=None, path="/", components=("form",), **extra)`: a `hotwire-native`
  session on `base + path` with the app's path configuration (`pathConfiguration` in `extra`
  replaces it), once its first page has loaded (`pageLoaded`); returns the session id.
- `loaded(c, s, webview, name)`: the next adapter message `name` of `webview`.
- `rendered(c, s, webview, path)`: the next visit of `path` in `webview` once it has rendered;
  `settled(...)`: once it has completed too (the response rendered after a cached snapshot).
- `tree(c, s)`, `paths(items, base)`, `stack_changed(c, s, cause_part)`.
"""
from __future__ import annotations

import os
import sys
import urllib.parse

import pytest

from browser_sessions_support import TIMEOUT, until, wait_until

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "hotwire_app"))
import server as hotwire_app  # noqa: E402

PLATFORMS = ["ios", "android"]


def _turbo_71():
    assert os.path.exists(hotwire_app.TURBO), "Turbo 7.1.0 is missing: run scripts/fetch-turbo.sh (make deps-test does)"
    return hotwire_app.start()


def app_fixture(scope="function", start=_turbo_71, name="app"):
    """A fixture `name` yielding the base URL of the app `start()` serves (it returns (server, base))."""
    @pytest.fixture(scope=scope, name=name)
    def app():
        server, base = start()
        yield base
        server.shutdown()
        server.server_close()
    return app


async def start(c, base, platform=None, path="/", components=("form",), **extra):
    params = {"url": base + path, "browser": True, "profile": "hotwire-native",
              "pathConfiguration": hotwire_app.PATH_CONFIGURATION, "bridgeComponents": list(components)}
    if platform is not None:
        params["platform"] = platform
    params.update(extra)
    result = await c.request("session.create", params, timeout=60)
    assert result["profile"] == "hotwire-native"
    s = result["session"]
    await loaded(c, s, "W1", "pageLoaded")
    return s


async def loaded(c, s, webview, name="visitRendered"):
    """The next adapter message `name` of `webview`."""
    return await c.next_event("hotwire.message", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == webview and p["name"] == name)


async def rendered(c, s, webview, path):
    """The next visit of `path` in `webview` (its `visitStarted`), once it has rendered. A visit
    with a cached snapshot renders twice (the snapshot, then the response): the first counts."""
    started = await c.next_event("hotwire.message", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == webview
                                 and p["name"] == "visitStarted" and urllib.parse.urlsplit(p["data"]["location"]).path == path)
    ident = started["data"]["identifier"]
    await c.next_event("hotwire.message", TIMEOUT, where=lambda p: p["session"] == s and p["name"] == "visitRendered"
                       and p["data"]["identifier"] == ident)
    return started


async def settled(c, s, webview, path):
    """As `rendered`, then until that visit completed: a restore visit with a cached snapshot
    renders the snapshot first and the response later, which replaces the page's elements (a
    click between the two may land on an element that is going)."""
    started = await rendered(c, s, webview, path)
    ident = started["data"]["identifier"]

    async def completed():  # (before or after its render: iOS posts visitCompleted at once)
        return any(p["session"] == s and p["name"] == "visitCompleted" and p["data"]["identifier"] == ident
                   for p in c.events("hotwire.message"))
    await until(completed, f"visitCompleted of {path}")
    return started


async def tree(c, s):
    return (await c.request("session.get", {"session": s}))["tree"]


def paths(items, base):
    return [(i["kind"][0].upper(), i["url"].removeprefix(base)) for i in items]


async def stack_changed(c, s, cause_part):
    return await c.next_event("stack.changed", TIMEOUT, where=lambda p: p["session"] == s and cause_part in p["cause"])


async def form_connect_and_reply(c, s, base):
    """Issue 21's bridge flow: the `form` component on /bridge sends `connect` with the page's
    URL and its submit title, reaches the controller (not ignored), and the controller's
    `bridge.reply` reaches the page (#reply shows its data). Returns the message."""
    await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#to-bridge"})
    message = await c.next_event("bridge.message", TIMEOUT, where=lambda p: p["session"] == s)
    assert (message["webview"], message["component"], message["event"]) == ("W1", "form", "connect")
    assert message["data"]["metadata"]["url"] == base + "/bridge"
    assert message["data"]["submitTitle"] == "Send"
    assert "ignored" not in message, message
    await c.request("bridge.reply", {"session": s, "webview": "W1", "id": message["id"], "component": "form",
                                     "event": "connect", "data": {"tapped": True}})
    await wait_until(c, s, "W1", "document.getElementById('reply').textContent === '{\"tapped\":true}'")
    return message
