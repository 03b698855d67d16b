"""Issue 20 (the browser behind a typed host boundary) read word for word, where
test_browser_sessions.py does not already check it: `webview.failed` carries exactly
`{session, webview, url, reason}` and the daemon logs a line for it; `session.get` shows the web
view as failed and a later `navigation.back` pops it; a recorded browser session in which a page
does `location.href = …` is test_browser_sessions.py's
`test_a_recorded_browser_session_replays_without_chromium`."""

import pytest

from bridgeclient import controller, ids
from browser_sessions_support import TIMEOUT, create, evaluate, run, site, stack_is, wait_until  # noqa: F401
from conftest import wait_for_log

DOWN = "http://127.0.0.1:9/down"


def test_webview_failed_fields_log_line_get_and_back(daemon, site):  # noqa: F811
    async def go():
        c = await controller(daemon.ws_url)
        s = await create(c, site + "/form")
        await c.request("navigation.navigateToUrl", {"session": s, "url": DOWN})
        failed = await c.next_event("webview.failed", TIMEOUT, where=lambda p: p["session"] == s)
        assert set(failed) == {"session", "webview", "url", "reason"}, failed
        assert failed["webview"] == "W2" and failed["url"] == DOWN and failed["reason"], failed
        got = await c.request("session.get", {"session": s})
        assert got["failed"] == [{"webview": "W2", "url": DOWN, "reason": failed["reason"]}]
        assert ids(got["stack"]) == "W1 W2"
        back = await c.request("navigation.back", {"session": s})
        assert back["removed"] == ["W2"] and ids(back["stack"]) == "W1"
        assert (await c.request("session.get", {"session": s}))["failed"] == []
        await c.close()
        return failed

    failed = run(go())
    # A log line names the web view, the url and the reason.
    assert wait_for_log(daemon, DOWN, timeout=TIMEOUT), daemon.stderr()
    lines = [l for l in daemon.stderr().splitlines() if DOWN in l]
    assert any("W2" in l and failed["reason"] in l for l in lines), lines


def test_a_session_whose_first_page_cannot_load_reports_it(daemon):
    """"A web view whose tab cannot open or whose page cannot load": the session's first web view
    too. Either its session.create fails with browser-error (the session cannot have its root)
    or W1 is reported failed."""
    async def go():
        c = await controller(daemon.ws_url)
        reply = await c.call("session.create", {"url": DOWN, "browser": True}, timeout=60)
        if "error" in reply:
            assert reply["error"]["code"] == "browser-error" and "net::ERR_" in reply["error"]["message"], reply
            assert (await c.request("session.list"))["sessions"] == []
        else:
            s = reply["result"]["session"]
            failed = await c.next_event("webview.failed", TIMEOUT, where=lambda p: p["session"] == s)
            assert failed["webview"] == "W1" and failed["url"] == DOWN and failed["reason"].startswith("net::ERR_"), failed
            got = await c.request("session.get", {"session": s})
            assert got["failed"] == [{"webview": "W1", "url": DOWN, "reason": failed["reason"]}]
        await c.close()

    run(go())
