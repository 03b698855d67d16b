"""Playwright attached to the tabs bridged drives (`--devtools`, docs/PLAYWRIGHT.md).

`bridged serve --devtools`: Chromium starts with the daemon and also listens for DevTools on a
loopback port; `GET /api/devtools` names it. Playwright for Python (PyPI, no browser download:
`connect_over_cdp` to bridged's own Chromium) drives the pages while a controller watches the
stack over bridged's protocol; both at once, without conflict.
"""
import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time

import pytest

from bridgeclient import controller, ids
from browser_sessions_support import DEMO, TIMEOUT, alive, create, descendants, evaluate, stack_is, wait_until
from conftest import LISTENING, _drain, bridged_bin, http_request, run_daemon_expect_exit

try:
    from playwright.async_api import async_playwright
except ImportError:  # pragma: no cover
    async_playwright = None

pytestmark = pytest.mark.skipif(async_playwright is None,
                                reason="Playwright for Python is missing: scripts/install-deps.sh --test")

DEVTOOLS = re.compile(r"^devtools (ws://127\.0\.0\.1:(\d+)/devtools/browser/[0-9a-f-]+)$")


class DevToolsDaemon:
    """`bridged serve|open --devtools …`: its stdout's `listening on` and `devtools ws://…` lines."""

    def __init__(self, *args, command="serve"):
        self.stderr_file = tempfile.NamedTemporaryFile(prefix="bridged-", suffix=".log", delete=False)
        self.stderr_file.close()
        env = dict(os.environ)
        env.pop("BRIDGED_TOKEN", None)
        port = [] if "--port" in args else ["--port", "0"]
        self.proc = subprocess.Popen([bridged_bin(), command, *port, "--devtools", *args],
                                     stdout=subprocess.PIPE, stderr=open(self.stderr_file.name, "wb"),
                                     stdin=subprocess.DEVNULL, env=env)
        self.lines = []
        m = LISTENING.match(self._line())
        assert m, f"no listening line: {self.lines} {self.stderr()}"
        self.host, self.port = m.group(1), int(m.group(2))
        self.url = f"http://{self.host}:{self.port}"
        self.ws_url = self.url.replace("http://", "ws://") + "/bridge"
        self.connect_host = self.host
        while True:
            line = self._line()
            assert line, f"the daemon ended before its devtools line: {self.lines} {self.stderr()}"
            m = DEVTOOLS.match(line)
            if m:
                self.devtools, self.devtools_port = m.group(1), int(m.group(2))
                break
        _drain(self.proc.stdout)

    def _line(self):
        line = self.proc.stdout.readline().decode().rstrip("\n")
        self.lines.append(line)
        return line

    def stderr(self):
        with open(self.stderr_file.name, errors="replace") as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def devtools_daemon():
    started = []

    def start(*args, **kwargs):
        d = DevToolsDaemon(*args, **kwargs)
        started.append(d)
        return d

    yield start
    for d in started:
        d.stop()


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 120))


def listening_sockets(pids):
    """[(address, port)] of the TCP sockets in LISTEN state that `pids` hold (from /proc)."""
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    found = []
    for path, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        with open(path) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if fields[3] != "0A" or fields[9] not in inodes:
                    continue
                hex_address, hex_port = fields[1].split(":")
                raw = bytes.fromhex(hex_address)
                # Each 32-bit word is in host order (little-endian here).
                words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                if v6 and words[:12] == b"\0" * 10 + b"\xff\xff":
                    words = words[12:]
                address = ".".join(map(str, words)) if len(words) == 4 else words.hex()
                found.append((address, int(hex_port, 16)))
    return found


def is_loopback(address):
    return address.startswith("127.") or address == "0" * 31 + "1"


def chromium_pids(d):
    return [pid for pid in descendants(d.proc.pid) if "chromium" in open(f"/proc/{pid}/comm").read()]


async def find_page(context, url, timeout=TIMEOUT):
    """The Playwright page of `context` whose url is `url` (the daemon's tabs are pages of the
    default context Playwright sees over CDP)."""
    deadline = time.monotonic() + timeout
    while True:
        for page in context.pages:
            if page.url == url:
                return page
        assert time.monotonic() < deadline, f"no page on {url}: {[p.url for p in context.pages]}"
        await context.wait_for_event("page", timeout=max(1, deadline - time.monotonic()) * 1000)


def closed_future(page):
    done = asyncio.get_running_loop().create_future()
    page.on("close", lambda _: done.done() or done.set_result(True))
    return done


# ---------------------------------------------------------------------------------------------


class Attached:
    """A controller with one browser session, and Playwright attached to bridged's Chromium."""

    def __init__(self, c, s, start, browser, page):
        self.c, self.s, self.start, self.browser, self.page = c, s, start, browser, page
        self.context = browser.contexts[0]


@contextlib.asynccontextmanager
async def attached(d, path, ready):
    """A browser session at `path` of the daemon `d`, its W1 ready once the JavaScript `ready`
    is true, and Playwright connected over DevTools with W1's page found; closed at the end."""
    start = d.url + path
    c = await controller(d.ws_url)
    s = await create(c, start)
    await wait_until(c, s, "W1", ready)
    async with async_playwright() as p:
        browser = await p.chromium.connect_over_cdp(d.devtools)
        yield Attached(c, s, start, browser, await find_page(browser.contexts[0], start))
        await browser.close()


def test_devtools_url_is_announced_and_served_behind_the_token(devtools_daemon):
    d = devtools_daemon("--token", "sekret")
    # Chromium runs from the start, with no browser session yet.
    assert chromium_pids(d), "Chromium starts with the daemon under --devtools"
    auth = {"Authorization": "Bearer sekret"}
    status, headers, body = http_request(d, "/api/devtools", headers=auth)
    assert status == 200 and headers["content-type"] == "application/json"
    assert json.loads(body) == {"webSocketDebuggerUrl": d.devtools}
    # The same token and Host rules as every /api route.
    assert http_request(d, "/api/devtools")[0] == 401
    assert http_request(d, "/api/devtools", headers={**auth, "Host": "attacker.example"})[0] == 421
    # Chromium's port and the daemon's own: loopback only.
    sockets = listening_sockets([d.proc.pid, *chromium_pids(d)])
    assert ("127.0.0.1", d.devtools_port) in sockets and ("127.0.0.1", d.port) in sockets, sockets
    assert all(is_loopback(a) for a, _ in sockets), sockets


def test_without_devtools_the_route_says_how_to_get_one(daemon_factory):
    d = daemon_factory()
    status, _, body = http_request(d, "/api/devtools")
    assert status == 404
    assert "--devtools" in json.loads(body)["error"]["message"]


def test_devtools_without_chromium_stops_the_daemon_with_a_clear_error():
    code, out, err = run_daemon_expect_exit("serve", "--port", "0", "--devtools", "--chromium", "/nonexistent/chromium")
    assert code == 1, (code, out, err)
    assert "--devtools" in err and "apt-get install chromium" in err, err
    assert "listening on" not in out and "devtools ws://" not in out, out


def test_listening_comes_once_the_devtools_url_is_served(daemon_factory):
    # A client that reads only the first line finds the url at once.
    d = daemon_factory("--devtools")
    status, _, body = http_request(d, "/api/devtools")
    assert status == 200, body
    assert DEVTOOLS.match("devtools " + json.loads(body)["webSocketDebuggerUrl"])


def test_open_prints_the_devtools_url_and_the_page_is_there(devtools_daemon):
    # `open` needs the url before the port is known: a free port of its own.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    url = f"http://127.0.0.1:{port}/app/astro.html"
    d = devtools_daemon(url, "--port", str(port), "--static", DEMO, command="open")
    assert f"dashboard http://127.0.0.1:{port}/" in d.lines

    async def go():
        async with async_playwright() as p:
            browser = await p.chromium.connect_over_cdp(d.devtools)
            page = await find_page(browser.contexts[0], url)
            await page.wait_for_function("document.body.dataset.renders === '1'")
            assert (await page.evaluate("navigator.userAgent")).endswith(" Astro App/1.0")
            # Playwright's connect_over_cdp leaves bridged's phone emulation alone.
            assert await page.evaluate("[innerWidth, innerHeight, navigator.maxTouchPoints > 0]") == [390, 844, True]
            await browser.close()

    run(go())


def test_playwright_walks_the_bar_scenario_with_a_controller(devtools_daemon):
    d = devtools_daemon("--static", DEMO)

    async def go():
        async with attached(d, "/app/astro.html", "document.body.dataset.renders === '1'") as a:
            c, s, context, page = a.c, a.s, a.context, a.page

            # The PWA's own link, clicked by Playwright: snapshot, placeholder, overlay, rendered.
            await page.click("#astro-deals")
            await stack_is(c, s, "P1 W1")
            await c.next_event("foreground.removed", TIMEOUT, where=lambda p: p["session"] == s and p["reason"] == "rendered")
            await page.wait_for_function("document.body.dataset.view === 'deals' && !document.getElementById('__bridged_foreground')")
            snap = await c.request("placeholder.snapshot", {"session": s, "placeholder": "P1"})
            assert snap["mimeType"] == "image/jpeg"

            # A classic navigation Playwright evaluates: a new tab, a new Playwright page for W2.
            async with context.expect_page() as info:
                await page.evaluate("location.href = '/app/classic.html'")
            w2 = await info.value
            await stack_is(c, s, "P1 W1 W2")
            await w2.wait_for_url(d.url + "/app/classic.html")
            # W2's page runs the injected client: it is connected for W2.
            await w2.wait_for_function("document.body.dataset.ready === 'true'")
            assert await w2.text_content("#webview") == "W2"
            assert page.url == a.start + "?page=deals", "W1's tab stays where it was"
            # bridged's own controller methods work on the same tabs meanwhile.
            assert await evaluate(c, s, "W2", "document.getElementById('webview').textContent") == "W2"
            assert (await c.request("session.screenshot", {"session": s}))["mimeType"] == "image/jpeg"

            # The hardware back: W2's tab closes, Playwright's page says so.
            closed = closed_future(w2)
            result = await c.request("navigation.back", {"session": s})
            assert result["action"] == "pop" and result["removed"] == ["W2"]
            await asyncio.wait_for(closed, TIMEOUT)
            assert w2.is_closed() and not page.is_closed()
            assert await page.evaluate("document.body.dataset.view") == "deals"
        # Playwright gone: bridged's tabs and session are as they were.
        assert ids((await c.request("session.get", {"session": s}))["stack"]) == "P1 W1"
        assert await evaluate(c, s, "W1", "document.body.dataset.view") == "deals"

    run(go())
    pids = chromium_pids(d)
    assert pids
    d.stop()
    assert not [pid for pid in pids if alive(pid)], "no Chromium outlives the daemon"


def test_go_back_on_a_tabs_first_page_pops_its_web_view(devtools_daemon):
    d = devtools_daemon("--static", DEMO)

    async def go():
        async with attached(d, "/app/classic.html", "document.body.dataset.ready === 'true'") as a:
            c, s, context, page = a.c, a.s, a.context, a.page
            async with context.expect_page() as info:
                await page.click("#to-pwa")
            w2 = await info.value
            await stack_is(c, s, "W1 W2")
            await c.next_event("page.connected", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == "W2")
            closed = closed_future(w2)
            # Back on the first page of W2's tab: the page before it stands for W1.
            await w2.go_back()
            await stack_is(c, s, "W1")
            await asyncio.wait_for(closed, TIMEOUT)
            # Back on the root's first page does nothing (nothing is below the root).
            assert await page.go_back() is None
            assert ids((await c.request("session.get", {"session": s}))["stack"]) == "W1"
            assert not page.is_closed() and page.url == a.start

    run(go())


def test_goto_loads_the_url_into_that_web_view(devtools_daemon):
    d = devtools_daemon("--static", DEMO)

    async def go():
        async with attached(d, "/app/astro.html", "document.body.dataset.renders === '1'") as a:
            c, s, page = a.c, a.s, a.page
            # The host loading a url into the web view: Playwright's goto succeeds, the stack
            # does not change, and the new document's injected client speaks for W1 again.
            response = await page.goto(d.url + "/app/classic.html?loaded")
            assert response.status == 200 and page.url == d.url + "/app/classic.html?loaded"
            await page.wait_for_function("document.body.dataset.ready === 'true'")
            assert await page.text_content("#webview") == "W1"
            assert ids((await c.request("session.get", {"session": s}))["stack"]) == "W1"
            # The page's own navigations are still stopped: a new web view.
            async with a.context.expect_page():
                await page.evaluate("location.href = '/app/astro.html'")
            await stack_is(c, s, "W1 W2")

    run(go())


def test_page_route_sees_documents_before_bridged(devtools_daemon):
    d = devtools_daemon("--static", DEMO)

    async def go():
        async with attached(d, "/app/classic.html", "document.body.dataset.ready === 'true'") as a:
            c, s, context, page = a.c, a.s, a.context, a.page
            seen = []

            async def handler(route):
                seen.append((route.request.resource_type, route.request.url))
                if "fulfil" in route.request.url:
                    await route.fulfill(body="<title>fulfilled</title><p id=x>fulfilled</p>", content_type="text/html")
                else:
                    await route.continue_()

            await page.route("**/*", handler)
            # A subresource routed by Playwright: bridged has nothing to do with it.
            assert await page.evaluate("fetch('/app/fulfil.json').then(r => r.text())") == "<title>fulfilled</title><p id=x>fulfilled</p>"
            # A document the route continues: bridged stops it next, a new web view as always.
            async with context.expect_page():
                await page.evaluate("location.href = '/app/astro.html?routed'")
            await stack_is(c, s, "W1 W2")
            assert ("document", d.url + "/app/astro.html?routed") in seen
            await c.request("navigation.back", {"session": s})
            await stack_is(c, s, "W1")
            # A document the route fulfils never reaches bridged: it loads in place, no web view.
            await page.evaluate("location.href = '/app/classic.html?fulfil'")
            await page.wait_for_selector("#x")
            assert ids((await c.request("session.get", {"session": s}))["stack"]) == "W1"

    run(go())


def test_check_with_devtools_names_its_chromium_on_stderr(daemon_factory):
    d = daemon_factory("--static", DEMO)
    proc = subprocess.run([bridged_bin(), "check", d.url + "/app/astro.html", "--devtools", "--max-states", "2"],
                          capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 0, (proc.returncode, err)
    assert DEVTOOLS.match(err.splitlines()[0]), err
    assert "devtools" not in proc.stdout.decode(), "the report on stdout stays as it was"


def test_the_docs_python_example_runs(tmp_path):
    # docs/PLAYWRIGHT.md's example, as written: pytest + Playwright + clients/python.
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(repo, "docs", "PLAYWRIGHT.md")) as f:
        doc = f.read()
    m = re.search(r"```python\n(# test_app_in_bridged\.py.*?)```", doc, re.S)
    assert m, "docs/PLAYWRIGHT.md has its example"
    example = tmp_path / "test_app_in_bridged.py"
    example.write_text(m.group(1))
    env = dict(os.environ)
    env.pop("BRIDGED_TOKEN", None)
    env.update(BRIDGED_BIN=bridged_bin(), BRIDGED_DEMO=DEMO,
               PYTHONPATH=os.pathsep.join(filter(None, [os.path.join(repo, "clients", "python", "src"), env.get("PYTHONPATH")])))
    proc = subprocess.run([os.sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(example)],
                          cwd=repo, env=env, capture_output=True, timeout=180, stdin=subprocess.DEVNULL)
    out = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
    assert proc.returncode == 0, out
    assert "1 passed" in out, out


def chromium_main(d):
    for pid in descendants(d.proc.pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"--remote-debugging-pipe" in argv and not any(a.startswith(b"--type=") for a in argv):
            return pid
    return None


def test_after_a_crash_a_new_chromium_listens_on_a_new_url(devtools_daemon):
    d = devtools_daemon("--static", DEMO)

    async def go():
        c = await controller(d.ws_url)
        s = await create(c, d.url + "/app/astro.html")
        first = chromium_main(d)
        assert first
        os.kill(first, signal.SIGKILL)
        await c.next_event("browser.crashed", TIMEOUT, where=lambda p: p["session"] == s)

        # /api/devtools answers 503 until the new Chromium listens (it starts at once, with no
        # browser session asking for it): another process's state, so it is asked again.
        async def served():
            status, _, body = http_request(d, "/api/devtools")
            assert status in (200, 503), (status, body)
            return status == 200 and json.loads(body)["webSocketDebuggerUrl"]

        deadline = time.monotonic() + TIMEOUT
        while not (url := await served()):
            assert time.monotonic() < deadline, "no new Chromium after the crash"
            await asyncio.sleep(0.05)
        assert url != d.devtools and DEVTOOLS.match("devtools " + url)
        second = chromium_main(d)
        assert second and second != first
        sockets = listening_sockets([d.proc.pid, *chromium_pids(d)])
        assert all(is_loopback(a) for a, _ in sockets), sockets
        # The new one serves Playwright and new browser sessions.
        s2 = await create(c, d.url + "/app/astro.html")
        async with async_playwright() as p:
            browser = await p.chromium.connect_over_cdp(url)
            page = await find_page(browser.contexts[0], d.url + "/app/astro.html")
            await page.wait_for_function("document.body.dataset.renders === '1'")
            await browser.close()
        assert ids((await c.request("session.get", {"session": s2}))["stack"]) == "W1"

    run(go())


@pytest.mark.parametrize("spare_tabs", [False, True], ids=["no-spare-tabs", "spare-tabs"])
def test_pages_map_to_web_views_by_target_id(devtools_daemon, spare_tabs):
    """Each of Playwright's pages is a tab: `session.get`'s `targetIds` and `webview.open`'s
    `targetId` name the page of each web view, `browserContextId` its context (one per session).
    With `--spare-tabs` (docs/PLAYWRIGHT.md, "Spare tabs") the session's spare is one more page of
    its context, on about:blank, that no web view names; a classic navigation is that page loading
    W2 (no new page for W2), and the next spare is the new page. Without it (the default with
    --devtools), W2 is a new page."""
    d = devtools_daemon("--static", DEMO, *(["--spare-tabs"] if spare_tabs else []))
    start = d.url + "/app/astro.html"

    async def go():
        c = await controller(d.ws_url)
        s = await create(c, start)
        other = await create(c, d.url + "/app/classic.html")
        await wait_until(c, s, "W1", "document.body.dataset.renders === '1'")
        got = await c.request("session.get", {"session": s})
        context_id, targets = got["browserContextId"], got["targetIds"]
        assert set(targets) == {"W1"} and context_id
        assert (await c.request("session.get", {"session": other}))["browserContextId"] not in (None, context_id)
        async with async_playwright() as p:
            browser = await p.chromium.connect_over_cdp(d.devtools)
            context = browser.contexts[0]

            async def info(page):
                cdp = await context.new_cdp_session(page)
                try:
                    return (await cdp.send("Target.getTargetInfo"))["targetInfo"]
                finally:
                    await cdp.detach()

            # Each of Playwright's pages names its tab; W1's is the page bridged names.
            by_target = {}
            for page in context.pages:
                by_target[(await info(page))["targetId"]] = page
            w1 = by_target[targets["W1"]]
            assert w1.url == start
            assert (await info(w1))["browserContextId"] == context_id

            async def spare_pages():
                out = []
                for page in context.pages:
                    i = await info(page)
                    if i["browserContextId"] == context_id and i["targetId"] not in targets.values():
                        out.append((page, i["targetId"]))
                return out

            if spare_tabs:
                deadline = time.monotonic() + TIMEOUT
                while len(spare := await spare_pages()) != 1:
                    assert time.monotonic() < deadline, "no spare page"
                    await asyncio.sleep(0.05)
                (spare_page, spare_id), = spare
                assert spare_page.url == "about:blank"

            # A new web view: its webview.open names its tab. Without spare tabs that tab is
            # Playwright's new page; with them it is the spare page, and the new page the next spare.
            async with context.expect_page() as new_page:
                await w1.evaluate("location.href = '/app/classic.html'")
                await stack_is(c, s, "W1 W2")  # (stack.changed comes before webview.open)
                opened = await c.next_event("webview.open", TIMEOUT, where=lambda p: p["session"] == s and p["webview"] == "W2")
                if spare_tabs:
                    await spare_page.wait_for_url(d.url + "/app/classic.html")
                    await spare_page.wait_for_function("document.body.dataset.ready === 'true'")
            w2 = spare_page if spare_tabs else await new_page.value
            assert opened["targetId"] == (await info(w2))["targetId"] and opened["browserContextId"] == context_id
            got = await c.request("session.get", {"session": s})
            assert got["targetIds"] == {"W1": targets["W1"], "W2": opened["targetId"]}
            if spare_tabs:
                assert await spare_page.text_content("#webview") == "W2"
                assert got["targetIds"]["W2"] == spare_id
                new_spare = await new_page.value
                assert new_spare.url == "about:blank"
                assert (await info(new_spare))["targetId"] not in got["targetIds"].values()

            # The hardware back: W2's page closes (with spare tabs, the spare stays).
            closed = asyncio.get_running_loop().create_future()
            w2.on("close", lambda _: closed.done() or closed.set_result(True))
            await c.request("navigation.back", {"session": s})
            await stack_is(c, s, "W1")
            assert (await c.request("session.get", {"session": s}))["targetIds"] == {"W1": targets["W1"]}
            await asyncio.wait_for(closed, TIMEOUT)
            assert not w1.is_closed()
            if spare_tabs:
                assert not new_spare.is_closed()
            await browser.close()
        await c.close()

    run(go())
