"""A farm: three daemons (`--instance a|b|c`) behind the shipped nginx and HAProxy configurations.

The proxies run the files of deploy/ with only the addresses changed (ports chosen at run time,
temporary paths for nginx's pid, logs and buffers), so what is tested is what is shipped. Every
routing assertion is checked against the daemons' own session lists, read over a controller
connection made straight to each daemon.
"""
from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

import bridged
from bridgeclient import Conn, controller, ids, page
from conftest import REPO, bridged_bin, run_daemon_expect_exit, start_daemon

INSTANCES = ("a", "b", "c")
APP = "http://127.0.0.1/app/"
SESSION_ID = re.compile(r"^s-([a-z0-9]{1,16})-[0-9a-f]{16}$")
# A host name the daemons are told to accept (--allow-origin), sent through the proxies.
PUBLIC_ORIGIN = "http://bridge.test"


def run(coro):
    return asyncio.run(coro)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def instance_of(session_id: str) -> str:
    m = SESSION_ID.match(session_id)
    assert m, f"{session_id!r} is not s-NAME-RANDOM"
    return m.group(1)


def http_get(port: int, path: str, headers: dict | None = None, timeout: float = 10.0):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def wait_for_status(port: int, path: str, want: int, timeout: float = 15.0):
    """Polls `path` until it answers `want` (a signal is handled asynchronously)."""
    deadline = time.monotonic() + timeout
    while True:
        status, body = http_get(port, path)
        if status == want:
            return status, body
        assert time.monotonic() < deadline, f"{path} still answers {status} ({body!r}), expected {want}"
        time.sleep(0.02)


# ---------------------------------------------------------------------------------------------
# The proxies, from the shipped files


def render_nginx(listen: int, daemons: dict[str, int], tmp: pathlib.Path) -> str:
    text = (REPO / "deploy/nginx.conf").read_text()
    defaults = {"a": 8701, "b": 8702, "c": 8703}
    for name, port in daemons.items():
        text, n = re.subn(rf"127\.0\.0\.1:{defaults[name]}\b", f"127.0.0.1:{port}", text)
        assert n == 2, f"deploy/nginx.conf should name daemon {name} twice (its upstream and `all`)"
    text, n = re.subn(r"listen 8787;", f"listen 127.0.0.1:{listen};", text)
    assert n == 1
    # Buffers of a non-packaged nginx: somewhere writable.
    temp = "".join(f"    {kind}_temp_path {tmp}/{kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    text = text.replace("http {\n", "http {\n" + temp, 1)
    return text


def render_haproxy(listen: int, daemons: dict[str, int]) -> str:
    text = (REPO / "deploy/haproxy.cfg").read_text()
    defaults = {"a": 8701, "b": 8702, "c": 8703}
    for name, port in daemons.items():
        text, n = re.subn(rf"127\.0\.0\.1:{defaults[name]}\b", f"127.0.0.1:{port}", text)
        assert n == 2, f"deploy/haproxy.cfg should name daemon {name} twice (its backend and `all`)"
    text, n = re.subn(r"bind 127\.0\.0\.1:8787", f"bind 127.0.0.1:{listen}", text)
    assert n == 1
    # This machine's descriptor limit may be below what the shipped maxconn asks for.
    text = re.sub(r"maxconn \d+", "maxconn 4000", text)
    return text


class Proxy:
    def __init__(self, kind: str, daemons: dict[str, int]):
        self.kind = kind
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix=f"bridged-{kind}-"))
        os.chmod(self.tmp, 0o755)  # nginx workers run as another user when started by root
        self.log = self.tmp / "proxy.log"
        self.proc = None
        last_error = ""
        for _ in range(3):  # a port chosen here may be taken before the proxy binds it
            self.port = free_port()
            if kind == "nginx":
                conf = self.tmp / "nginx.conf"
                conf.write_text(render_nginx(self.port, daemons, self.tmp))
                argv = [shutil.which("nginx") or "/usr/sbin/nginx", "-p", str(self.tmp), "-c", str(conf), "-e", str(self.tmp / "error.log"),
                        "-g", f"daemon off; pid {self.tmp}/nginx.pid; error_log {self.tmp}/error.log notice;"]
            else:
                conf = self.tmp / "haproxy.cfg"
                conf.write_text(render_haproxy(self.port, daemons))
                argv = [shutil.which("haproxy") or "/usr/sbin/haproxy", "-db", "-f", str(conf)]
            with open(self.log, "ab") as log:
                self.proc = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
            if self._wait_ready():
                return
            last_error = self.logs()
            self.stop()
        raise RuntimeError(f"{kind} did not start:\n{last_error}")

    def _wait_ready(self, timeout: float = 20.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                status, _ = http_get(self.port, "/healthz", timeout=2)
                if status == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def logs(self) -> str:
        out = ""
        for f in (self.log, self.tmp / "error.log"):
            if f.exists():
                out += f.read_text(errors="replace")
        return out

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/bridge"

    def session_url(self, sid: str) -> str:
        return f"{self.ws_url}?session={sid}"

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Farm:
    def __init__(self, kind: str, extra_args=()):
        self.daemons = {}
        for name in INSTANCES:
            self.daemons[name] = start_daemon("--instance", name, "--allow-origin", PUBLIC_ORIGIN, *extra_args)
        self.proxy = Proxy(kind, {n: d.port for n, d in self.daemons.items()})

    def direct(self, name: str) -> str:
        return self.daemons[name].ws_url

    async def own_sessions(self, name: str) -> dict[str, dict]:
        """The sessions daemon `name` itself lists, by id (a controller connection straight to it)."""
        ctl = await controller(self.direct(name), subscribe=False)
        try:
            listed = (await ctl.request("session.list"))["sessions"]
        finally:
            await ctl.close()
        return {s["session"]: s for s in listed}

    async def all_own_sessions(self) -> dict[str, dict[str, dict]]:
        return {name: await self.own_sessions(name) for name in INSTANCES if self.daemons[name].proc.poll() is None}

    def stop(self) -> None:
        self.proxy.stop()
        for d in self.daemons.values():
            d.kill_if_running()


@pytest.fixture(params=["nginx", "haproxy"])
def farm(request):
    if not shutil.which(request.param) and not os.path.exists(f"/usr/sbin/{request.param}"):
        pytest.fail(f"{request.param} is not installed (scripts/install-deps.sh --test installs it)")
    f = Farm(request.param)
    yield f
    f.stop()


async def gather_in_batches(coros, size=30):
    out = []
    for i in range(0, len(coros), size):
        out += await asyncio.gather(*coros[i:i + size])
    return out


# ---------------------------------------------------------------------------------------------
# The shipped files as they are


def test_shipped_proxy_configurations_are_valid_as_shipped():
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    r = subprocess.run([nginx, "-t", "-c", str(REPO / "deploy/nginx.conf")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    r = subprocess.run([haproxy, "-c", "-f", str(REPO / "deploy/haproxy.cfg")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    text = (REPO / "deploy/nginx.conf").read_text()
    assert re.search(r'map \$arg_session \$pool \{\s*"~\^s-a-"\s+daemon_a;', text)
    for unit in ("bridged.service", "bridged@.service"):
        body = (REPO / "deploy" / unit).read_text()
        for option in ("NoNewPrivileges=yes", "ProtectSystem=strict", "RestrictAddressFamilies=", "DynamicUser=yes",
                       "CapabilityBoundingSet=", "SystemCallFilter=@system-service"):
            assert option in body, f"{unit} lacks {option}"


# ---------------------------------------------------------------------------------------------
# Routing


def test_300_sessions_spread_over_the_farm_and_every_connection_lands_on_the_owner(farm):
    async def scenario():
        proxy = farm.proxy
        # 240 sessions made by pages that connect without a session, 60 by controllers'
        # session.create (each controller on whichever daemon the proxy picked).
        pages = await gather_in_batches([page(proxy.ws_url, url=APP) for _ in range(240)])
        creators = await gather_in_batches([controller(proxy.ws_url, subscribe=False) for _ in range(6)])
        created = []
        for ctl in creators:
            for _ in range(10):
                created.append(await ctl.request("session.create", {"url": APP}))
        page_sids = [p.hello["session"] for p in pages]
        created_sids = [c["session"] for c in created]
        all_sids = page_sids + created_sids
        assert len(set(all_sids)) == 300

        own = await farm.all_own_sessions()
        owner = {}
        for name, listed in own.items():
            for sid in listed:
                assert instance_of(sid) == name, f"daemon {name} lists {sid}"
                owner[sid] = name
        assert set(owner) == set(all_sids), "every session is listed by exactly one daemon"
        counts = {name: len(listed) for name, listed in own.items()}
        assert all(n >= 20 for n in counts.values()), f"sessions not spread over the three daemons: {counts}"

        # Page claims: the W1 of every created session, through the proxy with ?session=.
        claimers = await gather_in_batches(
            [page(proxy.session_url(c["session"]), url=APP, claim=c) for c in created])
        # Reconnections: every page-made session's page drops and re-claims its web view.
        await gather_in_batches([p.close() for p in pages])
        reclaimed = await gather_in_batches(
            [page(proxy.session_url(p.hello["session"]), url=APP, claim=p.hello) for p in pages])
        for p, again in zip(pages, reclaimed):
            assert again.hello["session"] == p.hello["session"] and again.hello["webview"] == "W1"
        # Session controllers: one per session, through the proxy with ?session=.
        session_ctls = await gather_in_batches(
            [controller(proxy.session_url(sid), subscribe=False) for sid in all_sids])
        gets = await gather_in_batches(
            [ctl.request("session.get", {"session": sid}) for ctl, sid in zip(session_ctls, all_sids)])
        assert [g["session"] for g in gets] == all_sids

        # The owners themselves: every W1 has its page connected, and each daemon counts exactly
        # the controller connections of its own sessions.
        own = await farm.all_own_sessions()
        for name, listed in own.items():
            assert {sid for sid in listed} == {sid for sid in all_sids if owner[sid] == name}
            for sid, s in listed.items():
                assert s["stack"][0]["connected"] is True, f"{sid} on {name}: its page did not land there"
        for name, d in farm.daemons.items():
            status, body = http_get(d.port, "/healthz")
            health = json.loads(body)
            mine = sum(1 for sid in all_sids if owner[sid] == name)
            mine_creators = sum(1 for ctl in creators if ctl.hello.get("instance") == name)
            # pages (one per session) + session controllers (one per session) + creators here
            assert health["instance"] == name
            assert health["connections"] == 2 * mine + mine_creators, (name, health)

        for c in claimers + reclaimed + session_ctls + creators:
            await c.close()

    run(scenario())


def test_a_claim_for_another_instances_session_is_unknown_session_naming_it(farm):
    async def scenario():
        p = await page(farm.direct("a"), url=APP)
        sid = p.hello["session"]
        assert instance_of(sid) == "a"
        # Straight to daemon b, bypassing the proxy: b does not have it and says whose it is.
        wrong = await Conn.open(farm.direct("b"))
        reply = await wrong.call("hello", {"protocol": 1, "role": "page", "url": APP, "session": sid,
                                           "webview": "W1", "token": p.hello["token"]})
        assert reply["error"]["code"] == "unknown-session"
        assert 'instance "a"' in reply["error"]["message"] and "?session=" in reply["error"]["message"]
        ctl = await controller(farm.direct("c"), subscribe=False)
        err = (await ctl.call("session.get", {"session": sid}))["error"]
        assert err["code"] == "unknown-session" and 'instance "a"' in err["message"]
        # Through the proxy the same claim lands on a.
        again = await page(farm.proxy.session_url(sid), url=APP, claim=p.hello)
        assert again.hello["session"] == sid
        for c in (p, wrong, ctl, again):
            await c.close()

    run(scenario())


def test_the_proxies_pass_an_allowed_public_host_name(farm):
    # The daemons accept Host and Origin bridge.test because they run with --allow-origin; the
    # proxies forward the client's Host unchanged. (A handshake by hand: a client library names
    # the host it connects to in Host, here the proxy's loopback address.)
    with socket.create_connection(("127.0.0.1", farm.proxy.port), timeout=10) as s:
        s.sendall(("GET /bridge HTTP/1.1\r\nHost: bridge.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Origin: {PUBLIC_ORIGIN}\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                   "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            data = s.recv(4096)
            assert data, f"closed during the handshake: {head!r}"
            head += data
        assert head.startswith(b"HTTP/1.1 101"), head
    status, body = http_get(farm.proxy.port, "/healthz", headers={"Host": "bridge.test"})
    assert status == 200 and json.loads(body)["ok"] is True


# ---------------------------------------------------------------------------------------------
# The seed scenario through the proxy


class FarmController:
    """What a controller that watches the whole farm does: one connection straight to each daemon
    (addresses from the farm's configuration) subscribed to every session; requests about one
    session go through the proxy on a connection made with `?session=ID`."""

    def __init__(self, farm: Farm):
        self.farm = farm
        self.watchers = {}
        self.by_session = {}

    async def open(self, events):
        for name in INSTANCES:
            c = await controller(self.farm.direct(name), subscribe=False)
            await c.request("session.subscribe", {"events": events})
            self.watchers[name] = c
        return self

    async def _for(self, sid):
        if sid not in self.by_session:
            self.by_session[sid] = await controller(self.farm.proxy.session_url(sid), subscribe=False)
        return self.by_session[sid]

    async def request(self, method, params):
        return await (await self._for(params["session"])).request(method, params)

    async def next_event(self, sid, name, where=None):
        return await self.watchers[instance_of(sid)].next_event(name, where=where)

    async def close(self):
        for c in list(self.watchers.values()) + list(self.by_session.values()):
            await c.close()


def test_seed_scenario_through_the_proxy(farm):
    # The steps and assertions of test_protocol.test_seed_scenario; pages claim through the proxy
    # with ?session= as bridge.js does.
    async def scenario():
        proxy = farm.proxy
        ctl = await FarmController(farm).open(["stack.changed", "foreground.shown", "foreground.removed"])

        async def claim_from(params):
            return await page(proxy.session_url(params["session"]), url=params["pageUrl"], claim=params)

        a = await page(proxy.ws_url, url=APP)
        sid = a.hello["session"]
        assert a.hello["webview"] == "W1" and ids(a.hello["stack"]) == "W1"
        assert a.hello["pageUrl"] == f"{APP}?bridge_session={sid}&bridge_webview=W1&bridge_token={a.hello['token']}"
        changed = await ctl.next_event(sid, "stack.changed", where=lambda p: p["session"] == sid)
        assert changed["cause"] == "hello" and ids(changed["stack"]) == "W1"

        r = await a.request("pwa-navigate", {"url": APP + "#/a", "title": "A"})
        assert r["placeholder"] == "P1" and ids(r["stack"]) == "P1 W1"
        assert r["stack"][0] == {"id": "P1", "kind": "placeholder", "of": "W1", "url": APP}
        shown = await ctl.next_event(sid, "foreground.shown")
        assert shown == {"session": sid, "webview": "W1", "kind": "blank", "timeoutMs": 1000}
        assert (await a.request("pwa-rendered"))["removed"] is True
        assert (await ctl.next_event(sid, "foreground.removed"))["reason"] == "rendered"

        await a.event("navigate", {"url": "http://127.0.0.1/app/classic.html"})
        load = await a.next_event("load")
        assert load["webview"] == "W2" and load["session"] == sid
        assert await a.closed() == 1000
        b = await claim_from(load)
        assert ids(b.hello["stack"]) == "P1 W1 W2"

        await b.event("navigate", {"url": APP + "#/b"})
        load = await b.next_event("load")
        assert load["webview"] == "W3"
        assert await b.closed() == 1000
        c = await claim_from(load)
        assert ids(c.hello["stack"]) == "P1 W1 W2 W3"

        for n, url in enumerate([APP + "#/c", APP + "#/d"]):
            r = await c.request("pwa-navigate", {"url": url})
            assert r["placeholder"] == f"P{n + 2}"
            await c.request("pwa-rendered")
        session = await ctl.request("session.get", {"session": sid})
        assert ids(session["stack"]) == "P1 W1 W2 P2 P3 W3"
        assert session["foreground"] is None

        expected = [
            ("swap", ["P3"], "P1 W1 W2 P2 W3"),
            ("swap", ["P2"], "P1 W1 W2 W3"),
            ("pop", ["W3"], "P1 W1 W2"),
            ("pop", ["W2"], "P1 W1"),
            ("swap", ["P1"], "W1"),
            ("none", [], "W1"),
        ]
        on_top = c
        for step, (action, removed, stack) in enumerate(expected, 1):
            r = await ctl.request("navigation.back", {"session": sid})
            assert (r["action"], r["removed"], ids(r["stack"])) == (action, removed, stack), f"back {step}"
            if action == "swap":
                back = await on_top.next_event("back")
                assert back["placeholder"] == removed[0], f"back {step}"
                fg = await ctl.next_event(sid, "foreground.shown", where=lambda p: p["kind"] == "placeholder")
                assert fg["webview"] == on_top.hello["webview"]
                await on_top.request("pwa-rendered")
            elif action == "pop":
                closed = await on_top.next_event("closed")
                assert closed["reason"] == "popped"
                assert await on_top.closed() == 1000, f"back {step}: the popped page is closed with 1000"
                on_top = await claim_from(closed["load"])
        assert (await ctl.request("navigation.canGoBack", {"session": sid}))["canGoBack"] is False
        assert len(c.events("back")) == 2
        # Only the owner ever had the session.
        own = await farm.all_own_sessions()
        assert [name for name, listed in own.items() if sid in listed] == [instance_of(sid)]
        await on_top.close()
        await ctl.close()

    run(scenario())


# ---------------------------------------------------------------------------------------------
# A daemon stops


def test_stopping_one_daemon_ends_only_its_sessions(farm):
    async def scenario():
        proxy = farm.proxy
        pages = await gather_in_batches([page(proxy.ws_url, url=APP) for _ in range(60)])
        by_instance = {}
        for p in pages:
            by_instance.setdefault(instance_of(p.hello["session"]), []).append(p)
        assert set(by_instance) == set(INSTANCES), {k: len(v) for k, v in by_instance.items()}
        ctls = await gather_in_batches([controller(proxy.session_url(p.hello["session"]), subscribe=False) for p in pages])
        for ctl, p in zip(ctls, pages):
            await ctl.request("session.subscribe", {"session": p.hello["session"]})

        farm.daemons["b"].stop(signal.SIGTERM, timeout=30)
        # b's pages and session controllers are closed ...
        for p, ctl in zip(pages, ctls):
            if instance_of(p.hello["session"]) == "b":
                await p.closed(timeout=20)
                await ctl.closed(timeout=20)
        # ... and the others keep going, with no error.
        for p, ctl in zip(pages, ctls):
            sid = p.hello["session"]
            if instance_of(sid) == "b":
                continue
            r = await p.request("pwa-navigate", {"url": APP + "#/after"})
            assert r["placeholder"] == "P1"
            await p.request("pwa-rendered")
            got = await ctl.request("session.get", {"session": sid})
            assert ids(got["stack"]) == "P1 W1"
            assert p.close_code is None and ctl.close_code is None
            assert not [f for f in p.frames + ctl.frames if "error" in f or f.get("event") in ("closed", "session.closed")]
        # New sessions go to the daemons that are left.
        fresh = [await page(proxy.ws_url, url=APP) for _ in range(12)]
        assert {instance_of(f.hello["session"]) for f in fresh} <= {"a", "c"}
        for c in pages + ctls + fresh:
            if c.close_code is None:
                await c.close()

    run(scenario())


def test_haproxy_stops_sending_new_sessions_to_a_draining_daemon():
    f = Farm("haproxy", extra_args=("--drain-ms", "120000"))
    try:
        async def scenario():
            proxy = f.proxy
            kept = [await page(proxy.ws_url, url=APP) for _ in range(9)]
            on_b = [p for p in kept if instance_of(p.hello["session"]) == "b"]
            assert on_b
            f.daemons["b"].send_signal(signal.SIGTERM)
            status, body = wait_for_status(f.daemons["b"].port, "/readyz", 503)
            assert json.loads(body)["reason"] == "draining"
            # HAProxy's check of /readyz takes b out of `all`: wait until 30 new sessions in a row
            # went elsewhere.
            streak, deadline = 0, time.monotonic() + 30
            while streak < 30:
                assert time.monotonic() < deadline, "HAProxy kept sending new sessions to the draining daemon"
                p = await page(proxy.ws_url, url=APP)
                streak = streak + 1 if instance_of(p.hello["session"]) != "b" else 0
                await p.close()
            # b's own sessions still work through the proxy while it drains.
            for p in on_b:
                again = await page(proxy.session_url(p.hello["session"]), url=APP, claim=p.hello)
                await again.request("pwa-navigate", {"url": APP + "#/x"})
                await again.close()
            f.daemons["b"].send_signal(signal.SIGTERM)  # a second SIGTERM ends the drain at once
            assert f.daemons["b"].wait(timeout=15) == 0

        run(scenario())
    finally:
        f.stop()


# ---------------------------------------------------------------------------------------------
# bridged sessions --farm


def sessions_cli(*args, env=None, timeout=30):
    full_env = dict(os.environ)
    full_env.pop("BRIDGED_TOKEN", None)
    if env:
        full_env.update(env)
    return subprocess.run([bridged_bin(), "sessions", *args], capture_output=True, text=True, timeout=timeout,
                          env=full_env, stdin=subprocess.DEVNULL)


def test_sessions_farm_lists_every_session_of_every_daemon(daemon_factory):
    daemons = {n: daemon_factory("--instance", n) for n in INSTANCES}
    made = {}
    with contextlib.ExitStack() as controllers:
        for n, d in daemons.items():
            # The sessions stay while their creator is connected (creating subscribes).
            ctl = controllers.enter_context(bridged.Controller(d.ws_url, subscribe=False))
            made[n] = [ctl.call("session.create", url=APP)["session"] for _ in range(3 + len(made))]
        urls = ",".join(d.url for d in daemons.values())
        r = sessions_cli("--farm", urls)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.strip().splitlines()
        assert lines[0].split() == ["SESSION", "DAEMON", "STACK"]
        rows = {line.split()[0]: line.split()[1:] for line in lines[1:]}
        expected = {sid: daemons[n].url for n in INSTANCES for sid in made[n]}
        assert {sid: row[0] for sid, row in rows.items()} == expected
        assert all(row[1] == "W1(*C)~" for row in rows.values())
        assert f"{len(expected)} sessions on 3 of 3 daemons" in r.stderr
        # JSON, and the ws:// and HOST:PORT forms of an address.
        forms = [daemons["a"].ws_url, f"127.0.0.1:{daemons['b'].port}", daemons["c"].url]
        r = sessions_cli("--farm", ",".join(forms), "--json")
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["errors"] == []
        assert sorted(s["session"] for s in doc["sessions"]) == sorted(expected)
        assert {s["session"]: instance_of(s["session"]) for s in doc["sessions"]} == \
            {sid: instance_of(sid) for sid in expected}


def test_sessions_farm_reports_unreachable_daemons_and_still_lists_the_others(daemon_factory):
    d = daemon_factory("--instance", "a")
    dead = free_port()
    with bridged.Controller(d.ws_url, subscribe=False) as ctl:
        sid = ctl.call("session.create")["session"]
        r = sessions_cli("--farm", f"{d.url},http://127.0.0.1:{dead}")
        assert r.returncode == 1
        assert sid in r.stdout
        assert f"http://127.0.0.1:{dead}: cannot connect" in r.stderr and "is the daemon running" in r.stderr
        assert "1 session on 1 of 2 daemons" in r.stderr


def test_sessions_farm_token_and_bad_addresses(daemon_factory):
    d = daemon_factory("--instance", "t", "--token", "sekret")
    r = sessions_cli("--farm", d.url)
    assert r.returncode == 1 and "not-allowed" in r.stderr and "--token" in r.stderr
    assert sessions_cli("--farm", d.url, "--token", "sekret").returncode == 0
    assert sessions_cli("--farm", d.url, env={"BRIDGED_TOKEN": "sekret"}).returncode == 0
    for bad, words in [("", "empty entry"), ("http://a:1,,http://b:2", "empty entry"),
                       ("https://x:1", "TLS"), ("ftp://x:1", "unknown scheme"), ("http://x:99999", "port")]:
        r = sessions_cli("--farm", bad)
        assert r.returncode != 0 and words in r.stderr, (bad, r.stderr)
        assert r.stdout == ""
    r = sessions_cli("--help")
    assert r.returncode == 0 and "--farm" in r.stdout
    root = subprocess.run([bridged_bin(), "--help"], capture_output=True, text=True, timeout=30)
    assert "sessions" in root.stdout


# ---------------------------------------------------------------------------------------------
# --instance, /healthz, /readyz, draining


def test_instance_names_session_ids_and_is_validated(daemon_factory):
    for bad in ("A", "a-b", "a_b", "x" * 17, "", "é"):
        code, out, err = run_daemon_expect_exit("--port", "0", "--instance", bad)
        assert code != 0 and "--instance" in err and "a-z" in err, (bad, err)
        assert "listening" not in out
    longest = "z9" * 8
    d = daemon_factory("--instance", longest)
    plain = daemon_factory()

    async def scenario():
        p = await page(d.ws_url, url=APP)
        assert instance_of(p.hello["session"]) == longest
        ctl = await controller(d.ws_url, subscribe=False)
        created = await ctl.request("session.create", {})
        assert instance_of(created["session"]) == longest
        assert f"bridge_session={created['session']}" in created["pageUrl"]
        q = await page(plain.ws_url, url=APP)
        assert re.match(r"^s-[0-9a-f]{16}$", q.hello["session"]), "without --instance, ids are as before"
        for c in (p, ctl, q):
            await c.close()

    run(scenario())


def test_the_transport_accepts_a_session_query_on_the_upgrade(daemon):
    async def scenario():
        p = await page(daemon.ws_url, url=APP)
        again = await page(daemon.ws_url + "?session=" + p.hello["session"], url=APP, claim=p.hello)
        assert again.hello["webview"] == "W1"
        junk = await page(daemon.ws_url + "?session=whatever&x=1", url=APP)
        assert junk.hello["session"] != p.hello["session"]
        for c in (p, again, junk):
            await c.close()

    run(scenario())


def test_healthz_and_readyz_while_draining(daemon_factory):
    d = daemon_factory("--instance", "h", "--drain-ms", "120000")
    status, body = http_get(d.port, "/healthz")
    health = json.loads(body)
    assert status == 200 and health["ok"] is True and health["draining"] is False and health["instance"] == "h"
    status, body = http_get(d.port, "/readyz")
    assert status == 200 and json.loads(body)["ready"] is True

    async def scenario():
        p = await page(d.ws_url, url=APP)
        d.send_signal(signal.SIGTERM)
        # Draining: both answer 503 ...
        status, body = wait_for_status(d.port, "/healthz", 503)
        health = json.loads(body)
        assert health["ok"] is False and health["draining"] is True
        status, body = http_get(d.port, "/readyz")
        assert status == 503 and json.loads(body) == {"ready": False, "reason": "draining", "instance": "h", "sessions": 1}
        # ... while the sessions here keep working (the drain lasts 120 s).
        r = await p.request("pwa-navigate", {"url": APP + "#/draining"})
        assert r["placeholder"] == "P1"
        assert d.proc.poll() is None
        # A second SIGTERM closes everything now: 1001, exit 0.
        d.send_signal(signal.SIGTERM)
        assert await p.closed(timeout=15) == 1001
        assert d.wait(timeout=15) == 0

    run(scenario())


def test_sigint_does_not_drain(daemon_factory):
    d = daemon_factory("--drain-ms", "120000")
    assert http_get(d.port, "/healthz")[0] == 200
    start = time.monotonic()
    assert d.stop(signal.SIGINT, timeout=30) == 0
    assert time.monotonic() - start < 60, "SIGINT waited for the drain"


def test_drain_ends_by_itself_and_drain_ms_is_validated(daemon_factory):
    d = daemon_factory("--drain-ms", "300")

    async def scenario():
        p = await page(d.ws_url, url=APP)
        d.send_signal(signal.SIGTERM)
        assert await p.closed(timeout=30) == 1001
        assert d.wait(timeout=15) == 0

    run(scenario())
    for bad in ("-1", "600001", "x"):
        code, _, err = run_daemon_expect_exit("--port", "0", "--drain-ms", bad)
        assert code != 0 and "--drain-ms" in err, err
    longest = daemon_factory("--drain-ms", "600000")  # the limit is accepted
    assert http_get(longest.port, "/healthz")[0] == 200
    assert longest.stop(signal.SIGINT, timeout=15) == 0
    d0 = daemon_factory("--drain-ms", "0")
    assert http_get(d0.port, "/healthz")[0] == 200
    assert d0.stop(signal.SIGTERM, timeout=15) == 0


def test_readyz_says_full_at_max_sessions(daemon_factory):
    d = daemon_factory("--max-sessions", "1")

    async def scenario():
        p = await page(d.ws_url, url=APP)
        status, body = http_get(d.port, "/readyz")
        assert status == 503 and json.loads(body)["reason"] == "max-sessions"
        assert http_get(d.port, "/healthz")[0] == 200, "a full daemon is alive"
        await p.close()

    run(scenario())
