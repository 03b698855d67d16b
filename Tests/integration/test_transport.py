"""Transport behaviour of the real daemon: HTTP routes, WebSocket framing limits, origins,
binding, slow readers, shutdown. Well-formed WebSocket traffic goes through the project's client
(`bridged.Connection`); what no client library would send (hand-made fragments, invalid UTF-8,
a client that never reads or never answers a ping) goes through conftest's `RawWebSocket`. The protocol itself is tested elsewhere: here the only thing
relied on is that every request gets one reply carrying its id (before `hello` that reply is an
error), and that a binary message gets an error with id null (and, for the slow reader, that
`session.get` answers with the url `session.create` was given)."""
from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest

import bridged
from conftest import (OP_BINARY, OP_CONT, OP_PING, OP_TEXT, Closed, RawWebSocket, client_frame, http_request,
                      raw_http, run_daemon_expect_exit, status_of, wait_for_log)


def request(id_, method="ping"):
    return json.dumps({"id": id_, "method": method, "params": {}})


def roundtrip(conn, id_, method="ping"):
    """Request `id_` sent by hand (no params check), its reply awaited."""
    conn.send_text(request(id_, method))
    reply, _ = conn.wait_reply(id_, 10)
    assert reply["id"] == id_, reply
    return reply


def connection(url, **kwargs):
    return bridged.Connection(url, timeout=10, **kwargs)


# --- HTTP ---------------------------------------------------------------------------------------


def test_healthz_is_json_ok(daemon):
    status, headers, body = http_request(daemon, "/healthz")
    assert status == 200
    assert headers["content-type"].startswith("application/json")
    assert json.loads(body)["ok"] is True


def test_bridge_js_is_javascript(daemon):
    status, headers, body = http_request(daemon, "/bridge.js")
    assert status == 200
    assert headers["content-type"].split(";")[0].strip() == "text/javascript"
    assert int(headers["content-length"]) == len(body) > 0


def test_unknown_paths_are_404(daemon):
    for path in ["/nope", "/app/", "/app/index.html", "/bridge.jsx", "/healthz/x"]:
        status, _, _ = http_request(daemon, path)
        assert status == 404, path


def test_plain_get_on_the_ws_endpoint_asks_for_an_upgrade(daemon):
    status, headers, _ = http_request(daemon, "/bridge")
    assert status == 426
    assert headers["upgrade"].lower() == "websocket"


def test_other_methods_are_refused(daemon):
    status, headers, _ = http_request(daemon, "/healthz", method="DELETE")
    assert status == 405
    assert "GET" in headers["allow"]


def test_head_has_headers_but_no_body(daemon):
    _, _, get_body = http_request(daemon, "/bridge.js")
    status, headers, body = http_request(daemon, "/bridge.js", method="HEAD")
    assert status == 200
    assert int(headers["content-length"]) == len(get_body)
    assert body == b""


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    (root / "sub").mkdir(parents=True)
    (root / "index.html").write_text("<h1>root index</h1>")
    (root / "sub" / "index.html").write_text("<h1>sub index</h1>")
    (root / "app.css").write_text("body { color: red }")
    (root / "big.bin").write_bytes(bytes(range(256)) * 4000)  # 1 MB: many body chunks
    (root / "nodir").mkdir()
    (tmp_path / "secret.txt").write_text("TOP-SECRET")
    os.symlink(tmp_path / "secret.txt", root / "link-out.txt")
    return root


def test_static_files(daemon_factory, site):
    d = daemon_factory("--static", str(site))
    status, headers, body = http_request(d, "/app/")
    assert (status, body) == (200, b"<h1>root index</h1>")
    assert headers["content-type"].startswith("text/html")
    status, headers, body = http_request(d, "/app/app.css")
    assert (status, body) == (200, b"body { color: red }")
    assert headers["content-type"].startswith("text/css")
    status, _, body = http_request(d, "/app/sub/")
    assert (status, body) == (200, b"<h1>sub index</h1>")
    status, headers, _ = http_request(d, "/app/sub")
    assert status == 301 and headers["location"] == "/app/sub/"
    status, headers, _ = http_request(d, "/app")
    assert status == 301 and headers["location"] == "/app/"
    status, _, body = http_request(d, "/app/big.bin")
    assert status == 200 and body == (site / "big.bin").read_bytes()
    for missing in ["/app/missing.html", "/app/nodir/", "/app/sub/nothing"]:
        assert http_request(d, missing)[0] == 404, missing


def test_static_path_traversal_is_refused(daemon_factory, site):
    d = daemon_factory("--static", str(site))
    attempts = [
        "/app/../secret.txt",
        "/app/sub/../../secret.txt",
        "/app/%2e%2e/secret.txt",
        "/app/%2E%2E/secret.txt",
        "/app/..%2fsecret.txt",
        "/app/%2e%2e%2fsecret.txt",
        "/app/sub/%2e%2e/%2e%2e/secret.txt",
        "/app/..\\secret.txt",
        "/app/link-out.txt",
        "/app//../secret.txt",
    ]
    for path in attempts:
        response = raw_http(d, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        assert b"TOP-SECRET" not in response, path
        assert status_of(response) in (400, 403, 404), (path, response[:80])


# --- WebSocket framing ----------------------------------------------------------------------------


def test_fragmented_text_is_reassembled(daemon):
    with connection(daemon.ws_url) as ws:
        # One message in several frames; the reply carries the id only if the daemon parsed
        # the whole, reassembled JSON.
        ws.send_fragments(['{"id":41,', '"method":', '"ping",', '"params":{}}'])
        assert ws.wait_reply(41, 10)[0]["id"] == 41
        # a large message (beyond one receive buffer) in a few big fragments
        pad = "x" * 60000
        ws.send_fragments(['{"id":42,"method":"ping","params":{"pad":"', pad, '"}}'])
        assert ws.wait_reply(42, 10)[0]["id"] == 42


def test_utf8_character_split_across_fragments_is_accepted(daemon):
    ws = RawWebSocket.to(daemon)
    try:
        text = '{"id":5,"method":"ping","params":{"w":"caf\u00e9"}}'.encode()
        cut = text.index(b"\xc3") + 1  # between the two bytes of é
        ws.send_frame(OP_TEXT, text[:cut], fin=False)
        ws.send_frame(OP_CONT, text[cut:], fin=True)
        opcode, payload = ws.recv_message()
        assert opcode == OP_TEXT and json.loads(payload)["id"] == 5
    finally:
        ws.close()


def test_single_large_frame_is_reassembled_from_receive_chunks(daemon):
    with connection(daemon.ws_url) as ws:
        ws.send_text('{"id":6,"method":"ping","params":{"pad":"' + "y" * 50000 + '"}}')  # one frame
        assert ws.wait_reply(6, 10)[0]["id"] == 6


def test_oversized_message_closes_with_1009(daemon):
    with connection(daemon.ws_url) as ws:
        ws.send_text("a" * 65537)
        assert ws.wait_closed(10) == 1009


def test_message_at_the_limit_is_accepted(daemon_factory):
    d = daemon_factory("--max-message-bytes", "1000")
    with connection(d.ws_url) as ws:
        head = '{"id":1,"method":"ping","params":{"pad":"'
        msg = head + "m" * (1000 - len(head) - 3) + '"}}'
        assert len(msg) == 1000
        ws.send_text(msg)
        assert ws.wait_reply(1, 10)[0]["id"] == 1
        ws.send_text(msg + " ")
        assert ws.wait_closed(10) == 1009


def test_oversized_message_in_small_fragments_closes_with_1009(daemon):
    ws = RawWebSocket.to(daemon)
    try:
        ws.send_frame(OP_TEXT, b"[" + b" " * 999, fin=False)
        for _ in range(70):  # 70 KB in 1 KB fragments, none of them big by itself
            ws.send_frame(OP_CONT, b" " * 1000, fin=False)
        ws.send_frame(OP_CONT, b"]", fin=True)
        assert ws.recv_close_code() == 1009
    finally:
        ws.close()


def test_invalid_utf8_closes_with_1007(daemon):
    ws = RawWebSocket.to(daemon)
    try:
        ws.send_frame(OP_TEXT, b'{"id":1,"method":"\xff\xfe"}')
        assert ws.recv_close_code() == 1007
    finally:
        ws.close()


def test_binary_frame_gets_an_error_reply_and_the_connection_stays(daemon):
    with connection(daemon.ws_url, record=True) as ws:
        ws.send_bytes(b"\x00\x01\x02")
        roundtrip(ws, 2)
        reply = ws.frames[0]
        assert reply["id"] is None
        assert reply["error"]["code"] == "invalid-request"


def test_200_concurrent_connections(daemon):
    connections = [connection(daemon.ws_url) for _ in range(200)]  # all open at once
    try:
        def client(n):
            for k in range(5):
                roundtrip(connections[n], n * 100 + k)
            return n

        with concurrent.futures.ThreadPoolExecutor(50) as pool:
            done = list(pool.map(client, range(200)))
        assert sorted(done) == list(range(200))
    finally:
        for c in connections:
            c.close()


def _frames(first_id, count, method, params=None):
    out = bytearray()
    for i in range(first_id, first_id + count):
        out += client_frame(OP_TEXT, json.dumps({"id": i, "method": method, "params": params or {}}).encode())
    return bytes(out)


def test_slow_reader_does_not_block_others_and_is_closed_1008(daemon_factory):
    """A client floods requests and reads nothing: the replies fill the socket buffers, then its
    send queue, while everyone else proceeds; past the cap the daemon closes it with 1008 (and
    logs it). When it finally reads it sees the replies that were already on their way, in
    order, then the 1008 close.

    The requests are small and their replies large (`session.get` of a session whose url is
    15,000 bytes: 79 bytes in, 15 KB out, under the 16 KiB the daemon writes at once), so that
    50 KB in fill what the kernel holds of the replies and then the cap. A flood of megabytes
    in (replies as small as the requests) stalled in the kernel on a loaded machine: once the
    slow (sanitized) daemon's receive buffer had overflowed, this client's view of its window
    stayed at 1 KiB or less and each of its probes was dropped, with the daemon's receive queue
    empty and both processes idle, until the client's socket timed out (Linux 6.18; make
    test-tsan failed so, and 8 in 12 runs of the test 4 at a time)."""
    cap = 64 * 1024
    url = "http://app.test/" + "x" * 15_000
    d = daemon_factory("--max-send-queue-bytes", str(cap), "--max-url-bytes", str(len(url)))
    slow = RawWebSocket.to(d, rcvbuf=4096, timeout=60)  # generous: an ASan daemon on a loaded machine reads slowly
    slow.send_text(json.dumps({"id": 0, "method": "hello", "params": {"protocol": 1, "role": "controller"}}))
    slow.send_text(json.dumps({"id": 1, "method": "session.create", "params": {"url": url}}))
    replies = {}
    while 1 not in replies:
        message = json.loads(slow.recv_message()[1])
        if "id" in message:
            replies[message["id"]] = message
    session = replies[1]["result"]["session"]

    # The others, meanwhile: each of 5 clients does 20 round trips.
    others_result = {}

    def others():
        def one(n):
            with connection(d.ws_url) as ws:
                for k in range(20):
                    roundtrip(ws, n * 1000 + k)
        try:
            with concurrent.futures.ThreadPoolExecutor(5) as pool:
                list(pool.map(one, range(5), timeout=30))
            others_result["done"] = True
        except Exception as e:  # reported by the assertion below
            others_result["error"] = e

    runner = threading.Thread(target=others)
    runner.start()
    # Twice what the kernel can hold of the replies before the daemon queues any (its send
    # buffer, autotuned up to tcp_wmem's maximum, and this client's receive buffer) and what
    # the daemon queues before it counts the reader slow at once (4 times the cap waiting).
    wmem_max = int(open("/proc/sys/net/ipv4/tcp_wmem").read().split()[2])
    first, count = 2, 2 * (wmem_max + 4096 * 2 + 5 * cap) // len(url) + 1
    slow.sock.sendall(_frames(first, count, "session.get", {"session": session}))
    # The overflow, then read at once (the daemon drops the connection if its close frame cannot
    # go out within its close grace of 5 s): the session's events (session.created,
    # stack.changed) and the replies already in flight (ids 2, 3, 4, … in order), then the
    # 1008 close.
    assert wait_for_log(d, "too slow", 120), d.stderr()
    expected = first
    with pytest.raises(Closed) as closed:
        while True:
            _, payload = slow.recv_message()
            message = json.loads(payload)
            if "event" in message:
                continue
            assert message["id"] == expected
            expected += 1
    assert closed.value.code == 1008
    assert first < expected < first + count
    slow.close()
    runner.join(60)
    assert others_result == {"done": True}, others_result


def test_close_code_1000_from_client_is_clean(daemon):
    with connection(daemon.ws_url) as ws:
        roundtrip(ws, 1)
    # the daemon is still fine
    with connection(daemon.ws_url) as ws:
        roundtrip(ws, 2)


# --- Upgrade policy ---------------------------------------------------------------------------------


def _upgrade_status(url, origin=None):
    try:
        with connection(url, origin=origin) as ws:
            roundtrip(ws, 1)
            return 101
    except bridged.HandshakeRefused as e:
        return e.status


def test_origins(daemon_factory):
    d = daemon_factory("--allow-origin", "https://app.example", "--allow-origin", "http://Other.Example:8080/")
    allowed = [None, "http://127.0.0.1:5173", "http://127.0.0.1", "https://localhost:3000",
               "http://localhost", "http://[::1]:8000", "https://app.example",
               "https://app.example:443", "http://other.example:8080"]
    refused = ["http://evil.example", "https://app.example:444", "http://app.example",
               "http://127.0.0.2:80", "http://localhost.evil.example", "null", "file://",
               "http://other.example"]
    for origin in allowed:
        assert _upgrade_status(d.ws_url, origin) == 101, origin
    for origin in refused:
        assert _upgrade_status(d.ws_url, origin) == 403, origin


def test_upgrade_on_another_path_is_refused(daemon):
    base = f"ws://{daemon.host}:{daemon.port}"
    for path in ["/", "/other", "/bridge/x", "/bridge.js", "/app/"]:
        assert _upgrade_status(base + path) in (403, 404), path
    assert _upgrade_status(base + "/bridge?session=s-1") == 101


def test_invalid_allow_origin_is_rejected_at_start():
    code, out, err = run_daemon_expect_exit("--port", "0", "--allow-origin", "not an origin")
    assert code != 0 and "listening" not in out
    assert "--allow-origin" in err


# --- Binding and start-up -----------------------------------------------------------------------------


def test_non_loopback_host_without_token_is_refused():
    code, out, err = run_daemon_expect_exit("--host", "0.0.0.0", "--port", "0")
    assert code != 0
    assert "listening" not in out
    assert "token" in err.lower()


def test_non_loopback_host_with_token_from_env_starts(daemon_factory):
    d = daemon_factory("--host", "0.0.0.0", env={"BRIDGED_TOKEN": "t0k3n"})
    assert d.host == "0.0.0.0"
    assert http_request_any(d.port, "/healthz")[0] == 200


def http_request_any(port, path):
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path)
    resp = conn.getresponse()
    return resp.status, resp.read()


def _listeners(port):
    """Local addresses listening on `port` (via ss, else /proc/net/tcp{,6})."""
    if shutil.which("ss"):
        out = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True).stdout
        return sorted(line.split()[3].rsplit(":", 1)[0] for line in out.splitlines() if line.strip())
    found = []
    for name, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            with open(name) as f:
                next(f)
                for line in f:
                    local, state = line.split()[1], line.split()[3]
                    addr, p = local.split(":")
                    if state == "0A" and int(p, 16) == port:
                        found.append(addr)
        except FileNotFoundError:
            pass
    return sorted("127.0.0.1" if a == "0100007F" else a for a in found)


def test_listener_is_bound_to_loopback_only(daemon):
    assert _listeners(daemon.port) == ["127.0.0.1"]


def test_localhost_binds_ipv4_loopback_only(daemon_factory):
    d = daemon_factory("--host", "localhost")
    assert d.host == "localhost"
    assert _listeners(d.port) == ["127.0.0.1"]


def test_ipv6_loopback(daemon_factory):
    if not socket.has_ipv6:
        pytest.skip("no IPv6")
    try:
        d = daemon_factory("--host", "::1")
    except Exception as e:  # a machine without ::1
        pytest.skip(f"::1 not available: {e}")
    assert d.host == "[::1]"
    assert _listeners(d.port) == ["[::1]"]
    status, _, _ = http_request(d, "/healthz")
    assert status == 200


def test_port_in_use_fails_cleanly(daemon):
    code, out, err = run_daemon_expect_exit("--port", str(daemon.port))
    assert code != 0
    assert "listening" not in out
    assert "could not start" in err


# --- Keepalive ------------------------------------------------------------------------------------------


def test_silent_client_is_pinged_then_dropped(daemon_factory):
    d = daemon_factory("--ping-interval-s", "1", "--ping-timeout-s", "2")
    silent = RawWebSocket.to(d, timeout=60)
    started = time.monotonic()
    fin, opcode, _ = silent.recv_frame()
    assert opcode == OP_PING  # lws pings after 1 s of silence; we never answer
    silent.recv_close_code()  # returns once the daemon hangs up (close frame or EOF)
    assert time.monotonic() - started >= 1  # not before the ping interval (the socket timeout bounds it)

    # The project's client answers pings by itself: the connection survives several ping intervals.
    with connection(d.ws_url) as ws:
        for k in range(3):
            roundtrip(ws, k)
            time.sleep(1.2)
        roundtrip(ws, 99)


# --- Shutdown -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_closes_every_client_with_1001_and_exits_0(daemon_factory, sig):
    d = daemon_factory()

    clients = [connection(d.ws_url) for _ in range(20)]
    for n, ws in enumerate(clients):
        roundtrip(ws, n)
    d.send_signal(sig)
    codes = [ws.wait_closed(10) for ws in clients]
    for ws in clients:
        ws.close()
    assert codes == [1001] * 20
    assert d.wait(timeout=10) == 0


def test_shutdown_is_bounded_with_a_client_that_does_not_read(daemon_factory):
    d = daemon_factory("--shutdown-timeout-ms", "500")
    stuck = RawWebSocket.to(d, rcvbuf=4096)
    for i in range(50):  # fill its socket buffers with replies it never reads
        stuck.send_text(request(i, "m" * 20000))
    started = time.monotonic()
    assert d.stop(signal.SIGTERM, timeout=60) == 0  # bounded: a daemon waiting on the reader never exits
    assert time.monotonic() - started < 30  # a generous ceiling: 60 times the shutdown timeout
    stuck.close()


# --- --event-loop -------------------------------------------------------------------------------


@pytest.mark.parametrize("loop", ["epoll", "poll"])
def test_both_event_loops_serve_pages_and_navigations(daemon_factory, loop):
    d = daemon_factory("--event-loop", loop)

    with connection(d.ws_url, record=True) as page:
        page.say_hello("page", url="http://127.0.0.1/app#/")
        for i in range(2, 52):
            page.send({"id": i, "method": "pwa-navigate", "params": {"url": f"http://127.0.0.1/app#/{i}"}})
            page.send_text(request(1000 + i))
        page.wait_reply(1051, 10)
        got = [m["id"] for m in page.frames if "id" in m][1:]  # after hello's
        assert got == [x for i in range(2, 52) for x in (i, 1000 + i)]
    status, _, _ = http_request(d, "/healthz")
    assert status == 200


def test_an_unknown_event_loop_is_refused():
    code, _, err = run_daemon_expect_exit("--event-loop", "select")
    assert code == 64
    assert "--event-loop" in err
