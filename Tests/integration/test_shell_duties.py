"""The shell's everyday duties in browser sessions (docs/BROWSER.md, "What the shell decides";
docs/PROTOCOL.md, "The shell's duties"): JavaScript dialogs never freeze a session, a busy page
fails its calls with page-unresponsive while the rest goes on, a killed renderer is reported
and reloaded, file choosers, permissions, downloads, other schemes, and pages that would open
tabs without end. Real Chromium (Debian's `chromium`), driven over the controller protocol."""
import asyncio
import http.server
import os
import signal
import time

import pytest

from bridgeclient import controller, ids
from browser_sessions_support import TIMEOUT, descendants, evaluate, run, serving, until, wait_until

HERE = "<!doctype html><meta name='viewport' content='width=device-width'>"


class ShellPages(http.server.BaseHTTPRequestHandler):
    """Pages that ask the shell things: dialogs, files, a position, downloads, loops."""

    PAGES = {
        "/alert": HERE + "<title>alert</title><script>alert('hello from the page'); window.after = 'yes';</script>",
        "/ask": HERE + """<title>ask</title><button id='c' onclick="window.c = confirm('sure?')">c</button>
            <button id='p' onclick="window.p = prompt('name?', 'anon')">p</button>
            <a id='leave' href='/plain'>leave</a>
            <script>window.alive = 'yes';</script>""",
        "/busy": HERE + "<title>busy</title><button id='spin' onclick='while (true) {}'>spin</button><script>window.alive = 'yes';</script>",
        "/plain": HERE + "<title>plain</title><p id='p'>plain</p><script>window.alive = 'yes';</script>",
        "/file": HERE + """<title>file</title><input id='f' type='file' accept='image/*' multiple>
            <script>document.getElementById('f').addEventListener('change', (e) => {
              window.files = Array.from(e.target.files).map((f) => f.name); });</script>""",
        "/geo": HERE + """<title>geo</title><script>window.where = 'waiting';
            navigator.geolocation.getCurrentPosition((p) => { window.where = [p.coords.latitude, p.coords.longitude]; },
                                                     (e) => { window.where = 'error ' + e.code; });</script>""",
        "/links": HERE + """<title>links</title><a id='mail' href='mailto:team@example.com'>mail</a>
            <a id='tel' href='tel:+15550100'>call</a><a id='dl' href='/download'>report</a>
            <script>window.alive = 'yes';</script>""",
        "/reloads": HERE + "<title>reloads</title><script>window.alive = 'yes'; setTimeout(() => location.reload(), 10);</script>",
        "/loop": HERE + "<title>loop</title><script>setTimeout(() => { location.href = '/loop?' + Math.random(); }, 10);</script>",
        "/popups": HERE + "<title>popups</title><button id='go' onclick='for (let i = 0; i < 200; i++) window.open(\"/plain?\" + i)'>go</button>",
        "/pushes": HERE + """<title>pushes</title><button id='go' onclick="for (let i = 1; i <= 10000; i++) history.pushState({}, '', '?n=' + i);
            window.pushed = history.length">go</button><script>window.alive = 'yes';</script>""",
    }

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/download":
            body = b"%PDF-1.4 not really"
            self.send_response(200)
            self.send_header("Content-Type", "application/pdf")
            self.send_header("Content-Disposition", 'attachment; filename="report.pdf"')
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        body = self.PAGES.get(path, HERE + "<p>?</p>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def pages():
    yield from serving(ShellPages)


async def open_session(c, url, **params):
    result = await c.request("session.create", {"url": url, "browser": True, **params}, timeout=60)
    return result["session"]


async def connected(c, s, webview="W1"):
    await c.next_event("page.connected", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == webview)


def test_an_alert_on_load_never_freezes_the_session(daemon_factory, pages):
    d = daemon_factory()

    async def go():
        c = await controller(d.ws_url)
        s = await open_session(c, pages + "/alert")
        dialog = await c.next_event("webview.dialog", TIMEOUT, where=lambda p: p["session"] == s)
        assert dialog["webview"] == "W1" and dialog["type"] == "alert" and dialog["message"] == "hello from the page"
        assert dialog["policy"] == "dismiss"
        closed = await c.next_event("webview.dialog.closed", TIMEOUT, where=lambda p: p["session"] == s)
        assert closed["by"] == "policy"
        # The page went on past its alert, and answers at once.
        await wait_until(c, s, "W1", "window.after === 'yes'")
        started = time.monotonic()
        assert await evaluate(c, s, "W1", "1 + 1") == 2
        assert time.monotonic() - started < 10, "a call after the alert waited for something"
        await c.close()

    run(go())


@pytest.mark.parametrize("policy, confirm, prompt", [("dismiss", False, None), ("accept", True, "anon")])
def test_confirm_and_prompt_follow_the_sessions_policy(daemon_factory, pages, policy, confirm, prompt):
    d = daemon_factory()

    async def go():
        c = await controller(d.ws_url)
        s = await open_session(c, pages + "/ask", dialogs=policy)
        await wait_until(c, s, "W1", "window.alive === 'yes'")
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#c"})
        await wait_until(c, s, "W1", "window.c !== undefined")
        assert await evaluate(c, s, "W1", "window.c") is confirm
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#p"})
        await wait_until(c, s, "W1", "window.p !== undefined")
        assert await evaluate(c, s, "W1", "window.p") == prompt
        kinds = [p["type"] for p in c.events("webview.dialog") if p["session"] == s]
        assert kinds == ["confirm", "prompt"]
        await c.close()

    run(go())


def test_a_controller_answers_a_dialog_and_hears_events_meanwhile(daemon_factory, pages):
    d = daemon_factory()

    async def go():
        c = await controller(d.ws_url)
        s = await open_session(c, pages + "/ask", dialogs="controller")
        await wait_until(c, s, "W1", "window.alive === 'yes'")
        # The click's own reply waits on the page (the prompt blocks it); the dialog's event
        # reaches the controller all the same.
        click = asyncio.ensure_future(c.request("webview.click", {"session": s, "webview": "W1", "selector": "#p"}))
        dialog = await c.next_event("webview.dialog", TIMEOUT, where=lambda p: p["session"] == s)
        assert dialog["type"] == "prompt" and dialog["defaultValue"] == "anon" and dialog["policy"] == "controller"
        # A second controller looks and answers (the first one's requests wait behind its click).
        c2 = await controller(d.ws_url)
        got = await c2.request("session.get", {"session": s})
        assert got["webviews"]["W1"]["state"] == "dialog"
        await c2.request("webview.dialog.answer", {"session": s, "webview": "W1", "accept": True, "text": "Ada"})
        await click
        await wait_until(c, s, "W1", "window.p === 'Ada'")
        closed = await c.next_event("webview.dialog.closed", TIMEOUT, where=lambda p: p["session"] == s)
        assert closed["accepted"] is True and closed["text"] == "Ada" and closed["by"] == "controller"
        await c2.close()
        await c.close()

    run(go())


def test_a_busy_page_fails_its_calls_and_the_rest_goes_on(daemon_factory, pages):
    d = daemon_factory()

    async def go():
        c = await controller(d.ws_url)
        s = await open_session(c, pages + "/busy")
        await wait_until(c, s, "W1", "window.alive === 'yes'")
        other = await open_session(c, pages + "/plain")
        await wait_until(c, other, "W1", "window.alive === 'yes'")
        # The click starts the loop (its own call may come back or time out).
        spin = asyncio.ensure_future(c.call("webview.click", {"session": s, "webview": "W1", "selector": "#spin"}, timeout=60))
        await asyncio.sleep(0)
        started = time.monotonic()
        reply = await c.call("webview.evaluate", {"session": s, "webview": "W1", "expression": "1"}, timeout=60)
        waited = time.monotonic() - started
        assert reply["error"]["code"] == "page-unresponsive", reply
        assert waited < 45, f"the call waited {waited:.1f} s"
        await spin
        await c.next_event("webview.unresponsive", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == "W1")
        got = await c.request("session.get", {"session": s})
        assert got["webviews"] == {"W1": {"state": "unresponsive"}}
        # Other sessions, the daemon and the busy session's own close keep working.
        c2 = await controller(d.ws_url)
        assert await evaluate(c2, other, "W1", "document.title") == "plain"
        await c2.request("ping")
        await c2.request("session.close", {"session": s})
        await c2.close()
        await c.close()

    run(go())


def renderers(d):
    """Every renderer process below the daemon (run without spare tabs, the session's page is
    the only one: which renderer shows it cannot be told from its command line)."""
    out = []
    for pid in descendants(d.proc.pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().decode(errors="replace")
        except OSError:
            continue
        if "--type=renderer" in args and "--extension-process" not in args:
            out.append(pid)
    return out


def test_a_killed_renderer_is_reported_fails_at_once_and_reloads(daemon_factory, pages):
    d = daemon_factory("--no-spare-tabs")

    async def go():
        c = await controller(d.ws_url)
        s = await open_session(c, pages + "/plain")
        await wait_until(c, s, "W1", "window.alive === 'yes'")
        victims = renderers(d)
        assert victims
        for pid in victims:
            os.kill(pid, signal.SIGKILL)
        crashed = await c.next_event("webview.crashed", TIMEOUT, where=lambda p: p["session"] == s)
        assert crashed["webview"] == "W1" and crashed["url"] == pages + "/plain" and crashed["reason"]
        started = time.monotonic()
        assert await c.error("webview.evaluate", {"session": s, "webview": "W1", "expression": "1"}) == "webview-crashed"
        assert time.monotonic() - started < 5
        got = await c.request("session.get", {"session": s})
        assert got["webviews"]["W1"]["state"] == "crashed"
        await c.request("webview.reload", {"session": s, "webview": "W1"})
        await wait_until(c, s, "W1", "window.alive === 'yes'")
        got = await c.request("session.get", {"session": s})
        assert got["webviews"] == {}
        await c.close()

    run(go())


def test_a_file_chooser_is_answered_with_files(daemon_factory, pages, tmp_path):
    d = daemon_factory()
    picture = tmp_path / "cat.png"
    picture.write_bytes(b"\x89PNG not really")

    async def go():
        c = await controller(d.ws_url)
        s = await open_session(c, pages + "/file")
        await connected(c, s)
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#f"})
        chooser = await c.next_event("webview.fileChooser", TIMEOUT, where=lambda p: p["session"] == s)
        assert chooser == {"session": s, "webview": "W1", "multiple": True, "accept": "image/*"}
        await c.request("webview.setFiles", {"session": s, "webview": "W1", "files": [str(picture)]})
        await wait_until(c, s, "W1", "JSON.stringify(window.files) === '[\"cat.png\"]'")
        await c.close()

    run(go())


def test_geolocation_follows_the_sessions_permission_and_position(daemon_factory, pages):
    d = daemon_factory()

    async def go():
        c = await controller(d.ws_url)
        s = await open_session(c, pages + "/geo", permissions={"geolocation": "granted"},
                               geolocation={"latitude": 52.52, "longitude": 13.405})
        await wait_until(c, s, "W1", "Array.isArray(window.where)")
        assert await evaluate(c, s, "W1", "window.where") == [52.52, 13.405]
        denied = await open_session(c, pages + "/geo", permissions={"geolocation": "denied"})
        await wait_until(c, denied, "W1", "String(window.where).startsWith('error')")
        await c.close()

    run(go())


def test_other_schemes_open_outside_and_downloads_leave_the_web_view(daemon_factory, pages):
    d = daemon_factory()

    async def go():
        c = await controller(d.ws_url)
        s = await open_session(c, pages + "/links")
        await wait_until(c, s, "W1", "window.alive === 'yes'")
        for selector, url in [("#mail", "mailto:team@example.com"), ("#tel", "tel:+15550100")]:
            await c.request("webview.click", {"session": s, "webview": "W1", "selector": selector})
            opened = await c.next_event("external.open", TIMEOUT, where=lambda p, url=url: p["session"] == s and p["url"] == url)
            assert opened["webview"] == "W1"
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#dl"})
        download = await c.next_event("webview.download", TIMEOUT, where=lambda p: p["session"] == s)
        assert download["url"] == pages + "/download" and download["filename"] == "report.pdf"
        async def settled():
            got = await c.request("session.get", {"session": s})
            return ids(got["stack"]) == "W1" and got
        await until(settled, "the stack back to W1 after the download")
        assert await evaluate(c, s, "W1", "window.alive") == "yes"
        await c.close()

    run(go())


def test_a_page_navigating_itself_in_a_loop_is_bounded(daemon_factory, pages):
    d = daemon_factory("--max-tabs-per-session", "6")

    async def go():
        c = await controller(d.ws_url)
        s = await open_session(c, pages + "/loop")
        limit = await c.next_event("session.limit", 60, where=lambda p: p["session"] == s)
        assert limit["limit"] == "tabs" and limit["max"] == 6
        # The daemon answers while the page goes on trying.
        c2 = await controller(d.ws_url)
        for _ in range(20):
            started = time.monotonic()
            await c2.request("ping")
            assert time.monotonic() - started < 2
        got = await c2.request("session.get", {"session": s})
        assert len(got["targetIds"]) <= 6
        assert len(got["stack"]) <= 6
        await c2.close()
        await c.close()

    run(go())


def test_popups_past_the_tab_limit_are_refused(daemon_factory, pages):
    # Chromium lets one popup through per user gesture (its popup blocker stops the other 199);
    # with a limit of one tab, that one is refused too.
    d = daemon_factory("--max-tabs-per-session", "1")

    async def go():
        c = await controller(d.ws_url)
        s = await open_session(c, pages + "/popups")
        await connected(c, s)
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#go"})
        limit = await c.next_event("session.limit", 60, where=lambda p: p["session"] == s)
        assert limit["max"] == 1 and limit["url"].startswith(pages + "/plain?")
        got = await c.request("session.get", {"session": s})
        assert ids(got["stack"]) == "W1"
        await c.request("ping")
        await c.close()

    run(go())


def test_ten_thousand_pushes_grow_nothing(daemon_factory, pages):
    d = daemon_factory()

    async def go():
        c = await controller(d.ws_url)
        s = await open_session(c, pages + "/pushes")
        await wait_until(c, s, "W1", "window.alive === 'yes'")
        await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#go"})
        await wait_until(c, s, "W1", "window.pushed > 1")
        # (Chromium itself drops pushState calls past 200 in 10 s, its flood protection: the
        # page ends at whatever address it kept.) The web view follows its page's address
        # (classic: the browser's reports), one item.
        where = await evaluate(c, s, "W1", "location.href")
        assert "?n=" in where
        async def followed():
            got = await c.request("session.get", {"session": s})
            return got["stack"][-1]["url"] == where and got
        got = await until(followed, f"the web view at {where}", timeout=60)
        assert ids(got["stack"]) == "W1"
        c2 = await controller(d.ws_url)
        started = time.monotonic()
        await c2.request("ping")
        assert time.monotonic() - started < 2
        await c2.close()
        await c.close()

    run(go())


def test_a_page_reloading_itself_every_ten_milliseconds_grows_nothing(daemon_factory, pages):
    d = daemon_factory()

    async def go():
        c = await controller(d.ws_url)
        s = await open_session(c, pages + "/reloads")
        # It reloads over and over: its page connects again each time; nothing else grows.
        for n in range(1, 6):
            await c.next_event("page.connected", TIMEOUT, where=lambda p: p["session"] == s)
        c2 = await controller(d.ws_url)
        for _ in range(10):
            started = time.monotonic()
            await c2.request("ping")
            assert time.monotonic() - started < 2
        got = await c2.request("session.get", {"session": s})
        assert ids(got["stack"]) == "W1" and len(got["targetIds"]) == 1
        await c2.close()
        await c.close()

    run(go())

