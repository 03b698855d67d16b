"""Abuse tests: what a careless client or an attacker on loopback tries, on raw sockets
(conftest's `RawWebSocket`: unmasked frames, a reader that stops reading, hand-made heads), the
well-behaved side through the project's client (`bridged.Connection`).

Each test names the item of the hardening work it covers. None asserts how fast anything
happens: a refusal is recognised by its status or close code, a hang by an incomplete response.
"""
import json
import re
import resource
import socket
import time

import pytest

import bridged
from conftest import (OP_CLOSE, Closed, RawWebSocket, raw_http, start_daemon, status_of, wait_for_log)


def request_bytes(d, path, method="GET", headers=(), body=b"", host=None):
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host or f'127.0.0.1:{d.port}'}"]
    lines += list(headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def hello_page(ws, url="http://127.0.0.1/app/"):
    """A page's hello on a raw socket (the tests that go on with hand-made frames)."""
    ws.send_text(json.dumps({"id": 1, "method": "hello", "params": {"protocol": 1, "role": "page", "url": url}}))
    return ws.recv_message()


def complete(response: bytes) -> bool:
    head, sep, body = response.partition(b"\r\n\r\n")
    m = re.search(rb"(?i)content-length:\s*(\d+)", head)
    return bool(sep) and m is not None and len(body) >= int(m.group(1))


# --- 2. one big message is not a slow reader ------------------------------------------------------


def test_a_single_message_larger_than_the_send_queue_limit_is_delivered(daemon_factory):
    d = daemon_factory("--max-send-queue-bytes", "1024")
    with bridged.Connection(d.ws_url, timeout=10, record=True) as page:
        hello = page.say_hello("page", url="http://127.0.0.1/app/" + "x" * 3000)  # the reply carries the url twice
        assert len(json.dumps(page.frames[0])) > 1024
        assert hello["webview"] == "W1"
        assert page.request("ping") == {}  # still open


def test_a_reader_that_stays_behind_is_closed_with_1008(daemon_factory):
    d = daemon_factory("--max-send-queue-bytes", "1024", "--slow-reader-ms", "100")
    ctl = RawWebSocket.to(d, rcvbuf=4096)
    ctl.send_text(json.dumps({"id": 1, "method": "hello", "params": {"protocol": 1, "role": "controller"}}))
    ctl.recv_message()
    ctl.send_text(json.dumps({"id": 2, "method": "session.subscribe", "params": {}}))
    ctl.recv_message()
    page = bridged.Connection(d.ws_url, timeout=10)
    page.say_hello("page", url="http://127.0.0.1/app/")
    # The controller (by hand: it must stop reading) stops reading; the page keeps the events coming.
    for i in range(400):
        page.request("pwa-navigate", {"url": "http://127.0.0.1/" + "y" * 2000})
        page.request("pwa-rendered")
        if "reader is too slow" in d.stderr():
            break
    assert wait_for_log(d, "reader is too slow")
    assert ctl.recv_close_code() == 1008
    page.close()


# --- 3. file descriptors ----------------------------------------------------------------------------


def limits_of(pid):
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                soft, hard = line.split()[3:5]
                return int(soft), int(hard)
    raise AssertionError("no open-file limit")


def start_with_soft_limit(soft, *args):
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, before[1]), before[1]))
    try:
        return start_daemon(*args)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)


def test_the_soft_open_file_limit_is_raised_to_the_hard_one_and_logged():
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard <= 256:
        pytest.skip("the hard open-file limit is too low to tell")
    d = start_with_soft_limit(256)
    try:
        soft_now, hard_now = limits_of(d.proc.pid)
        assert soft_now == hard_now or soft_now == 1048576
        assert soft_now > 256
        assert wait_for_log(d, "raised the open-file limit")
    finally:
        d.kill_if_running()


def test_connections_over_the_cap_are_refused_cheaply_and_logged_once(daemon_factory):
    d = daemon_factory("--max-connections", "20")
    started = time.monotonic()
    opened, refused = [], 0
    for _ in range(60):
        try:
            opened.append(RawWebSocket.to(d, timeout=10))
        except (ConnectionError, ConnectionRefusedError, OSError):
            refused += 1
    try:
        assert 10 <= len(opened) <= 30, len(opened)
        assert refused >= 30
        assert wait_for_log(d, "connection cap reached")
        # No accept spin: over two seconds at the cap with clients waiting, the daemon is mostly idle.
        waiting = [socket.create_connection((d.connect_host, d.port)) for _ in range(20)]
        cpu0 = cpu_seconds(d.proc.pid)
        time.sleep(2)  # measuring CPU over a window, not waiting for an event
        assert cpu_seconds(d.proc.pid) - cpu0 < 1.0
        # Once per 10 s interval, not per attempt (80 refused attempts so far).
        assert 1 <= d.stderr().count("connection cap reached") <= 1 + (time.monotonic() - started) / 10
        for s in waiting:
            s.close()
        # Under the cap again, a new connection is served.
        for ws in opened[:5]:
            ws.close()
        deadline = time.monotonic() + 30
        while True:
            try:
                RawWebSocket.to(d).close()
                break
            except (ConnectionError, ConnectionRefusedError, OSError):
                assert time.monotonic() < deadline
                time.sleep(0.1)
    finally:
        for ws in opened:
            ws.close()


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0


# --- 4. DNS rebinding --------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8787", "localhost.evil.example"])
def test_http_for_another_host_is_refused_with_421(daemon, host):
    r = raw_http(daemon, request_bytes(daemon, "/api/sessions", host=host))
    assert status_of(r) == 421, r[:200]
    assert b'"sessions"' not in r


@pytest.mark.parametrize("host", ["localhost", "localhost:{port}", "127.0.0.1:{port}", "[::1]:{port}", "127.0.0.1"])
def test_http_for_loopback_names_is_served(daemon, host):
    r = raw_http(daemon, request_bytes(daemon, "/api/sessions", host=host.format(port=daemon.port)))
    assert status_of(r) == 200, r[:200]


def test_allow_host_and_allow_origin_name_more_hosts(daemon_factory):
    d = daemon_factory("--allow-host", "app.test", "--allow-origin", "http://dev.test:5173")
    for host in ("app.test", "app.test:1234", "dev.test:5173"):
        assert status_of(raw_http(d, request_bytes(d, "/healthz", host=host))) == 200, host
    assert status_of(raw_http(d, request_bytes(d, "/healthz", host="other.test"))) == 421


def test_upgrades_for_another_host_are_refused_with_421(daemon):
    s = socket.create_connection((daemon.connect_host, daemon.port), timeout=10)
    s.sendall(request_bytes(daemon, "/bridge", headers=["Upgrade: websocket", "Connection: Upgrade",
                                                         "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                                                         "Sec-WebSocket-Version: 13"], host="evil.example"))
    assert status_of(s.recv(4096)) == 421
    s.close()


# --- 5. the token guards HTTP too ---------------------------------------------------------------------


def test_with_a_token_http_needs_it_except_health_script_and_app(daemon_factory):
    d = daemon_factory("--token", "T0k3n")
    for path in ("/api/sessions", "/", "/metrics"):
        r = raw_http(d, request_bytes(d, path))
        assert status_of(r) == 401, (path, r[:200])
        assert b'"sessions"' not in r
    assert status_of(raw_http(d, request_bytes(d, "/api/sessions", headers=["Authorization: Bearer wrong"]))) == 401
    assert status_of(raw_http(d, request_bytes(d, "/api/sessions", headers=["Authorization: Bearer T0k3n"]))) == 200
    for path in ("/healthz", "/bridge.js"):
        assert status_of(raw_http(d, request_bytes(d, path))) == 200, path
    assert status_of(raw_http(d, request_bytes(d, "/app/"))) == 404  # public, just no --static here


def test_the_one_time_dashboard_link_sets_a_strict_http_only_cookie(daemon_factory):
    d = daemon_factory("--token", "T0k3n")
    assert wait_for_log(d, "/?token=")
    code = re.search(r"/\?token=([0-9a-f]+)", d.stderr()).group(1)
    assert code != "T0k3n"
    r = raw_http(d, request_bytes(d, f"/?token={code}"))
    assert status_of(r) == 303
    cookie_line = re.search(rb"(?i)set-cookie:\s*([^\r\n]+)", r).group(1).decode()
    assert "HttpOnly" in cookie_line and "SameSite=Strict" in cookie_line
    cookie = cookie_line.split(";")[0]
    assert "T0k3n" not in cookie
    assert status_of(raw_http(d, request_bytes(d, "/api/sessions", headers=[f"Cookie: {cookie}"]))) == 200
    assert status_of(raw_http(d, request_bytes(d, f"/?token={code}"))) == 401  # used once
    assert status_of(raw_http(d, request_bytes(d, "/?token=nope"))) == 401


# --- 7. requests with a body ---------------------------------------------------------------------------


def test_a_get_with_a_body_gets_its_whole_response(daemon):
    r = raw_http(daemon, request_bytes(daemon, "/healthz", headers=["Content-Length: 5"], body=b"hello"))
    assert status_of(r) == 200 and complete(r), r


def test_a_post_is_refused_with_405_and_a_complete_response(daemon):
    r = raw_http(daemon, request_bytes(daemon, "/api/sessions", "POST",
                                       headers=["Content-Length: 11", "Content-Type: application/json"], body=b'{"a":"b"}\r\n'))
    assert status_of(r) == 405 and complete(r), r


def test_a_large_or_chunked_body_is_refused_with_413(daemon):
    r = raw_http(daemon, request_bytes(daemon, "/api/sessions", "POST", headers=["Content-Length: 100000000"]))
    assert status_of(r) == 413 and complete(r), r
    r = raw_http(daemon, request_bytes(daemon, "/healthz", "POST", headers=["Transfer-Encoding: chunked"]))
    assert status_of(r) == 413 and complete(r), r


# --- 8. wire conformance --------------------------------------------------------------------------------


def test_a_close_frame_with_a_one_byte_payload_gets_1002(daemon):
    ws = RawWebSocket.to(daemon)
    ws.send_frame(OP_CLOSE, b"\x03")
    assert ws.recv_close_code() == 1002
    ws.close()


def test_headers_over_4_kib_get_431(daemon):
    big = "User-Agent: " + "a" * 5000
    r = raw_http(daemon, request_bytes(daemon, "/healthz", headers=[big]))
    assert status_of(r) == 431 and complete(r), r[:200]
    s = socket.create_connection((daemon.connect_host, daemon.port), timeout=10)
    s.sendall(request_bytes(daemon, "/bridge", headers=["Upgrade: websocket", "Connection: Upgrade",
                                                         "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                                                         "Sec-WebSocket-Version: 13", big]))
    assert status_of(s.recv(4096)) == 431
    s.close()
    # Just under the limit is served.
    r = raw_http(daemon, request_bytes(daemon, "/healthz", headers=["User-Agent: " + "a" * 3500]))
    assert status_of(r) == 200


# --- 9. log injection ------------------------------------------------------------------------------------


def test_client_values_reach_the_log_escaped(daemon):
    s = socket.create_connection((daemon.connect_host, daemon.port), timeout=10)
    s.sendall(request_bytes(daemon, "/bridge", headers=["Upgrade: websocket", "Connection: Upgrade",
                                                         "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                                                         "Sec-WebSocket-Version: 13",
                                                         "Origin: http://evil.example\x1b[2J\x1b]0;pwned\x07"]))
    s.recv(4096)
    s.close()
    assert wait_for_log(daemon, "refused WebSocket upgrade")
    assert "\x1b" not in daemon.stderr() and "\x07" not in daemon.stderr()


# --- 8. wire conformance: unmasked frames, heads of any size ------------------------------------
# libwebsockets accepts unmasked client frames and drops heads over its 8 KiB buffer without a
# response; the daemon follows each connection's bytes itself (Sources/CWireCheck).

from conftest import OP_PING, OP_TEXT, client_frame  # noqa: E402

MASK_KEY = b"\x37\xfa\x21\x3d"


def frame(opcode: int, payload: bytes, fin: bool = True, masked: bool = True) -> bytes:
    """A client frame; masked with a non-zero key (so an unmasked reading would be garbage)."""
    return client_frame(opcode, payload, fin, masked, key=MASK_KEY)


def ping_request(id_: int, padding: int = 0) -> bytes:
    # Whitespace after the object is valid JSON: a way to make a request of any size.
    return json.dumps({"id": id_, "method": "ping"}).encode() + b" " * padding


def upgrade_request(d) -> bytes:
    return request_bytes(d, "/bridge", headers=["Upgrade: websocket", "Connection: Upgrade",
                                                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                                                 "Sec-WebSocket-Version: 13"])


def reply_id(ws) -> int:
    return json.loads(ws.recv_message()[1])["id"]


def assert_ends_after_close(ws):
    """After the server's close frame: our answer, then the end of the stream."""
    ws.sock.sendall(frame(OP_CLOSE, b"\x03\xe8"))
    ws.sock.settimeout(15)
    data = ws.buf
    while True:
        chunk = ws.sock.recv(65536)
        if not chunk:
            break
        data += chunk
    assert data == b"", data[:100]  # nothing after the close frame


def test_an_unmasked_text_frame_gets_close_1002(daemon):
    ws = RawWebSocket.to(daemon)
    hello_page(ws)
    ws.sock.sendall(frame(OP_TEXT, ping_request(2), masked=False))
    assert ws.recv_close_code() == 1002
    assert_ends_after_close(ws)
    assert wait_for_log(daemon, "unmasked frame")
    ws.close()


def test_an_unmasked_ping_gets_close_1002(daemon):
    ws = RawWebSocket.to(daemon)
    ws.sock.sendall(frame(OP_PING, b"are you there", masked=False))
    assert ws.recv_close_code() == 1002
    assert_ends_after_close(ws)
    ws.close()


def test_an_unmasked_continuation_gets_1002_and_frames_before_it_are_answered(daemon):
    ws = RawWebSocket.to(daemon)
    hello_page(ws)
    body = ping_request(7)
    # One packet: a whole masked request, then a message whose second fragment is unmasked.
    ws.sock.sendall(frame(OP_TEXT, ping_request(6)) + frame(OP_TEXT, body[:5], fin=False)
                    + frame(0, body[5:], masked=False))
    assert reply_id(ws) == 6
    assert ws.recv_close_code() == 1002
    ws.close()


def upgrade_with_frames(s: socket.socket, daemon, frames: bytes) -> RawWebSocket:
    """Sends the upgrade request and `frames` in one write; returns the WebSocket after its 101."""
    s.sendall(upgrade_request(daemon) + frames)
    ws = RawWebSocket.__new__(RawWebSocket)
    ws.sock, ws.buf = s, b""
    while b"\r\n\r\n" not in ws.buf:
        ws.buf += s.recv(4096)
    head, _, ws.buf = ws.buf.partition(b"\r\n\r\n")
    assert status_of(head) == 101
    return ws


def test_frames_pipelined_behind_the_upgrade_are_answered(daemon):
    s = socket.create_connection((daemon.connect_host, daemon.port), timeout=10)
    hello = json.dumps({"id": 1, "method": "hello", "params": {"protocol": 1, "role": "page",
                                                              "url": "http://127.0.0.1/app/"}}).encode()
    ws = upgrade_with_frames(s, daemon, frame(OP_TEXT, hello) + frame(OP_TEXT, ping_request(2)))
    assert reply_id(ws) == 1
    assert reply_id(ws) == 2
    ws.close()


def test_an_unmasked_frame_pipelined_behind_the_upgrade_gets_1002(daemon):
    s = socket.create_connection((daemon.connect_host, daemon.port), timeout=10)
    ws = upgrade_with_frames(s, daemon, frame(OP_TEXT, ping_request(1), masked=False))
    assert ws.recv_close_code() == 1002
    ws.close()


def test_a_masked_client_keeps_working_across_any_read_boundaries(daemon_factory):
    d = daemon_factory("--max-message-bytes", "200000")
    ws = RawWebSocket.to(d)
    ws.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    hello_page(ws)
    rng = __import__("random").Random(11)
    next_id = 10
    # Payload lengths around each length encoding: 7-bit, 16-bit, 64-bit.
    for padding in (0, 100, 200, 65_000, 65_600, 70_000):
        for _ in range(3):
            msg = ping_request(next_id, padding)
            msg += b" " * max(0, {100: 125, 200: 126, 65_000: 65_535, 65_600: 65_536}.get(padding, 0) - len(msg))
            frames = []
            if rng.random() < 0.5:  # a fragmented message with a ping between its fragments
                cut = rng.randrange(1, len(msg))
                frames = [frame(OP_TEXT, msg[:cut], fin=False), frame(OP_PING, b"p" * rng.randrange(0, 126)),
                          frame(0, msg[cut:])]
            else:
                frames = [frame(OP_TEXT, msg)]
            data = b"".join(frames)
            i = 0
            while i < len(data):  # written in pieces of 1 byte to 3 KiB: the reads split anywhere
                n = rng.choice((1, 2, 3, 5, 13, 700, 3000))
                ws.sock.sendall(data[i:i + n])
                i += n
            assert reply_id(ws) == next_id
            next_id += 1
    ws.sock.sendall(frame(OP_CLOSE, b"\x03\xe8"))
    assert ws.recv_close_code() == 1000
    ws.close()


def head_of(d, size: int, path: str, upgrade: bool) -> bytes:
    """A request head of exactly `size` bytes (request line through the blank line)."""
    extra = ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
             "Sec-WebSocket-Version: 13"] if upgrade else []
    base = request_bytes(d, path, headers=extra + ["User-Agent: "])
    out = request_bytes(d, path, headers=extra + ["User-Agent: " + "a" * (size - len(base))])
    assert len(out) == size
    return out


def response_until_complete_or_end(d, request: bytes) -> bytes:
    s = socket.create_connection((d.connect_host, d.port), timeout=15)
    try:
        try:
            s.sendall(request)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the whole head was written: the answer is still there
        data = b""
        while not complete(data):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        return data
    finally:
        s.close()


@pytest.mark.parametrize("size", [8193, 16384, 65536])
@pytest.mark.parametrize("upgrade", [False, True])
def test_heads_over_8_kib_get_a_complete_431(daemon, size, upgrade):
    r = response_until_complete_or_end(daemon, head_of(daemon, size, "/bridge" if upgrade else "/healthz", upgrade))
    assert status_of(r) == 431 and complete(r), r[:200]
    assert b"Connection: close" in r


@pytest.mark.parametrize("size", [5000, 8192])
@pytest.mark.parametrize("upgrade", [False, True])
def test_heads_between_4_and_8_kib_still_get_431(daemon, size, upgrade):
    r = response_until_complete_or_end(daemon, head_of(daemon, size, "/bridge" if upgrade else "/healthz", upgrade))
    assert status_of(r) == 431 and complete(r), r[:200]


def test_a_head_just_under_4_kib_is_served(daemon):
    r = response_until_complete_or_end(daemon, head_of(daemon, 4000, "/healthz", False))
    assert status_of(r) == 200 and complete(r), r[:200]


def test_every_head_on_a_kept_alive_connection_is_checked(daemon):
    s = socket.create_connection((daemon.connect_host, daemon.port), timeout=15)
    # A request with a body (read and discarded), a normal one, then one over 8 KiB.
    s.sendall(request_bytes(daemon, "/healthz", headers=["Content-Length: 3000"], body=b"b" * 3000))
    data = b""
    while not complete(data):
        data += s.recv(65536)
    assert status_of(data) == 200
    s.sendall(request_bytes(daemon, "/healthz"))
    data = b""
    while not complete(data):
        data += s.recv(65536)
    assert status_of(data) == 200
    s.sendall(head_of(daemon, 20000, "/healthz", False))
    data = b""
    while not complete(data):
        chunk = s.recv(65536)
        assert chunk, data
        data += chunk
    assert status_of(data) == 431
    s.close()
