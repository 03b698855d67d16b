"""What the daemon must hold under abuse a red team found lacking (issue 25): the closing
handshake after a client's Close, a pong ahead of queued data, clear start-up errors, claims
stripped from every stored url. Real sockets against the real binary: the frame-level tests
write hand-made frames (a Close followed by data in one write, a ping between fragments) that
no WebSocket library sends, on conftest's `RawWebSocket`; the rest uses the project's client."""
from __future__ import annotations

import json
import socket
import struct

import bridged
import slow_reader_rss
from conftest import (OP_CLOSE, OP_CONT, OP_PING, OP_PONG, OP_TEXT, RawWebSocket, http_request,
                      run_daemon_expect_exit)
from conftest import client_frame as frame

MIB = 1024 * 1024


def request(id_: int, method: str = "ping") -> bytes:
    return json.dumps({"id": id_, "method": method, "params": {}}).encode()


def frames_until_end(ws: RawWebSocket) -> list[tuple[int, bytes]]:
    """Every frame the server sends until it closes the socket: [(opcode, payload)]."""
    out = []
    try:
        while True:
            _, op, payload = ws.recv_frame()
            out.append((op, payload))
    except (ConnectionError, socket.timeout, OSError):
        pass
    return out


# --- Memory under a slow reader ----------------------------------------------------------------


def test_one_slow_reader_costs_at_most_four_times_the_limit_and_gives_it_back():
    """One controller subscribed to everything stops reading while four pages push, at
    --max-send-queue-bytes 64 MiB: the daemon's RSS stays within the idle daemon plus four times
    the limit until the 1008 close, and comes back within 32 MiB of idle after it (within 10 s)."""
    limit = 64 * MIB
    m = slow_reader_rss.measure(limit, after_s=10.0, settle_within=32 * MIB)
    assert m["overflowed"], m["errors"]
    assert not m["errors"], m["errors"]
    assert m["peak"] <= m["idle"] + 4 * limit, (m["idle"] / MIB, m["peak"] / MIB)
    assert m["after"] <= m["idle"] + 32 * MIB, (m["idle"] / MIB, m["after"] / MIB, m["afterSeries"])


# --- The closing handshake (RFC 6455 §5.5.1, §7.1.2) -------------------------------------------


def test_data_after_the_clients_close_is_not_processed(daemon):
    """A Close and then a request in the same write: the server answers the Close and closes;
    the request after it gets no reply."""
    ws = RawWebSocket.to(daemon)
    ws.sock.sendall(frame(OP_CLOSE, struct.pack("!H", 1000) + b"bye") + frame(OP_TEXT, request(7)))
    got = frames_until_end(ws)
    ws.close()
    assert got, "the server sent nothing (no closing handshake)"
    assert [op for op, _ in got] == [OP_CLOSE], got
    assert struct.unpack("!H", got[0][1][:2])[0] == 1000


def test_a_request_before_the_close_is_still_answered(daemon):
    ws = RawWebSocket.to(daemon)
    ws.sock.sendall(frame(OP_TEXT, request(8)) + frame(OP_CLOSE, struct.pack("!H", 1000)))
    got = frames_until_end(ws)
    ws.close()
    assert [op for op, _ in got] == [OP_TEXT, OP_CLOSE], got
    assert json.loads(got[0][1])["id"] == 8


def test_each_of_many_close_then_data_writes_gets_only_the_close(daemon):
    for k in range(20):
        ws = RawWebSocket.to(daemon)
        ws.sock.sendall(frame(OP_CLOSE, struct.pack("!H", 1001)) + frame(OP_TEXT, request(k))
                        + frame(OP_TEXT, request(k + 100)))
        got = frames_until_end(ws)
        ws.close()
        assert [op for op, _ in got] == [OP_CLOSE], (k, got)


# --- Control frames ahead of data (RFC 6455 §5.5.2: a pong "as soon as practical") -------------


def test_a_ping_between_fragments_is_answered_before_the_reply(daemon):
    ws = RawWebSocket.to(daemon)
    body = request(9)
    ws.sock.sendall(frame(OP_TEXT, body[:10], fin=False) + frame(OP_PING, b"p1")
                    + frame(OP_CONT, body[10:], fin=True))
    _, op1, p1 = ws.recv_frame()
    _, op2, p2 = ws.recv_frame()
    ws.close()
    assert (op1, p1) == (OP_PONG, b"p1"), (op1, p1, op2, p2)
    assert op2 == OP_TEXT and json.loads(p2)["id"] == 9


def test_pongs_stay_ahead_of_replies_over_many_messages(daemon):
    """Each of 50 messages carries a ping between its fragments: every pong comes before the
    reply to its message, and replies keep flowing afterwards (the pong bookkeeping clears)."""
    ws = RawWebSocket.to(daemon)
    for k in range(50):
        body = request(k)
        ws.sock.sendall(frame(OP_TEXT, body[:5], fin=False) + frame(OP_PING, b"%d" % k)
                        + frame(OP_CONT, body[5:]))
        _, op1, p1 = ws.recv_frame()
        _, op2, p2 = ws.recv_frame()
        assert (op1, p1) == (OP_PONG, b"%d" % k), (k, op1, p1)
        assert op2 == OP_TEXT and json.loads(p2)["id"] == k
    # Without pings, replies keep their order.
    ws.sock.sendall(b"".join(frame(OP_TEXT, request(1000 + k)) for k in range(5)))
    ids = [json.loads(ws.recv_frame()[2])["id"] for _ in range(5)]
    ws.close()
    assert ids == [1000 + k for k in range(5)]


# --- Start-up errors -----------------------------------------------------------------------------


def test_a_port_in_use_is_named_as_such():
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        code, out, err = run_daemon_expect_exit("--port", str(port))
    finally:
        holder.close()
    assert code == 1, (code, err)
    assert "listening" not in out
    assert f"127.0.0.1:{port} is already in use (EADDRINUSE)" in err, err
    assert "has no port" not in err


def test_an_address_not_on_this_machine_is_named_as_such():
    # 192.0.2.0/24 is TEST-NET-1: never an address of this machine.
    code, out, err = run_daemon_expect_exit("--host", "192.0.2.1", "--port", "0", "--token", "t" * 32)
    assert code == 1, (code, err)
    assert "listening" not in out
    assert "192.0.2.1" in err and "(EADDRNOTAVAIL)" in err, err


# --- Claims in stored urls -------------------------------------------------------------------------


def test_no_spelling_of_a_claim_reaches_api_sessions(daemon):
    token = "s3cr3t-claim-token"
    urls = [
        f"http://app.test/a?BRIDGE_TOKEN={token}&x=1",
        f"http://app.test/b?bridge%5Ftoken={token}",
        f"http://app.test/c?%62ridge_token={token}&Bridge_Session=s9",
        f"http://app.test/d#bridge_token={token}",
        f"http://app.test/e#/route?y=2&bridge_token={token}",
    ]
    with bridged.Connection(daemon.ws_url, timeout=15) as page:
        page.say_hello("page", url=urls[0])
        for url in urls[1:]:
            page.request("pwa-navigate", {"url": url})
        status, _, body = http_request(daemon, "/api/sessions")
    assert status == 200
    text = body.decode()
    for marker in ["http://app.test/a", "http://app.test/e"]:
        assert marker in text, text
    assert token not in text, text
    low = text.lower()
    for spelling in ["bridge_token", "bridge_session", "bridge%5f", "%62ridge"]:
        assert spelling not in low, (spelling, text)
