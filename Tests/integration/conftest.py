"""Shared fixtures for the integration tests: start the real `bridged` binary and talk to it.

Reusable pieces (import them with `from conftest import ...` or use the fixtures):

- `start_daemon(*args, env=None)` → `Daemon` (port, urls, process); `--port 0` is added unless
  given. Raises `DaemonStartError` (with stderr) when no `listening on` line appears.
- `run_daemon_expect_exit(*args)` → (returncode, stdout, stderr) for a daemon that must refuse
  to start.
- fixtures `daemon_factory` (start any number, all stopped at teardown) and `daemon` (one with
  default flags).
- `http_request(daemon, path, method="GET", headers=None)` → (status, headers, body) and
  `raw_http(daemon, request_bytes)` → bytes (for paths an HTTP client would normalise).
- `RawWebSocket` and `client_frame`: a minimal blocking client on a plain socket that can send
  what well-behaved clients refuse to (invalid UTF-8, hand-made or unmasked frames, a close
  followed by data) and read frames one by one (ping, close codes), or stop reading. Only the
  tests of the WebSocket layer itself and of abuse use it; every other test speaks to the daemon
  through the project's Python client (clients/python, `import bridged`; from coroutines through
  `bridgeclient`).

The binary is `$BRIDGED_BIN`, else `.build/release/bridged`, else `.build/debug/bridged`.
"""
from __future__ import annotations

import base64
import http.client
import os
import pathlib
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
# The project's Python client (clients/python, docs/PYTHON-CLIENT.md): `import bridged` uses the
# checkout's own, installed or not.
sys.path.insert(0, str(REPO / "clients" / "python" / "src"))
LISTENING = re.compile(r"^listening on http://(\[[0-9a-fA-F:]+\]|[^:/\s]+):(\d+)$")


def bridged_bin() -> str:
    env = os.environ.get("BRIDGED_BIN")
    if env:
        if not os.access(env, os.X_OK):
            raise FileNotFoundError(f"BRIDGED_BIN={env} is not an executable (build it: swift build -c release)")
        return env
    for candidate in (REPO / ".build/release/bridged", REPO / ".build/debug/bridged"):
        if os.access(candidate, os.X_OK):
            return str(candidate)
    raise FileNotFoundError("no bridged binary: run `swift build -c release` or set BRIDGED_BIN")


class DaemonStartError(RuntimeError):
    pass


class Daemon:
    def __init__(self, proc: subprocess.Popen, host: str, port: int, stderr_path: str, args: list[str]):
        self.proc = proc
        self.host = host  # as printed (IPv6 in brackets)
        self.port = port
        self.stderr_path = stderr_path
        self.args = args

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}/bridge"

    @property
    def connect_host(self) -> str:
        return self.host.strip("[]")

    def stderr(self) -> str:
        with open(self.stderr_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def send_signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float = 10.0) -> int:
        return self.proc.wait(timeout=timeout)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int:
        """Signals the daemon and waits for its exit; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise

    def kill_if_running(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop_if_running(self, timeout: float = 30.0) -> None:
        """SIGTERM (the daemon cleans up: Chromium and its profile directory), SIGKILL if stuck."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill_if_running()


def _read_first_line(proc: subprocess.Popen, timeout: float) -> str | None:
    result: list[str] = []
    done = threading.Event()

    def reader():
        line = proc.stdout.readline()
        result.append(line.decode("utf-8", errors="replace") if line else "")
        done.set()

    threading.Thread(target=reader, daemon=True).start()
    if not done.wait(timeout):
        return None
    return result[0]


def _drain(stream) -> None:
    # Keep reading stdout after the first line so the daemon can never block on a full pipe.
    def run():
        try:
            while stream.read(65536):
                pass
        except (OSError, ValueError):
            pass

    threading.Thread(target=run, daemon=True).start()


def start_daemon(*args: str, env: dict | None = None, timeout: float = 15.0,
                 command: list[str] | None = None) -> Daemon:
    """`command`: what runs instead of `[bridged_bin()]` (a wrapper and its binary, e.g. in
    test_deb.py); it must exec the daemon, so that the process is the daemon itself."""
    argv = list(args)
    if "--port" not in argv:
        argv = ["--port", "0", *argv]
    stderr_file = tempfile.NamedTemporaryFile(prefix="bridged-", suffix=".log", delete=False)
    full_env = dict(os.environ)
    full_env.pop("BRIDGED_TOKEN", None)
    if env:
        full_env.update(env)
    proc = subprocess.Popen([*(command or [bridged_bin()]), *argv], stdout=subprocess.PIPE, stderr=stderr_file,
                            stdin=subprocess.DEVNULL, env=full_env)
    stderr_file.close()
    line = _read_first_line(proc, timeout)
    m = LISTENING.match(line.strip()) if line else None
    if not m:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        with open(stderr_file.name, encoding="utf-8", errors="replace") as f:
            err = f.read()
        raise DaemonStartError(f"bridged {' '.join(argv)} did not start (first line {line!r}, exit "
                               f"{proc.returncode}):\n{err}")
    _drain(proc.stdout)
    return Daemon(proc, m.group(1), int(m.group(2)), stderr_file.name, argv)


def run_daemon_expect_exit(*args: str, env: dict | None = None, timeout: float = 15.0):
    """Runs a daemon that must exit by itself; returns (returncode, stdout, stderr)."""
    full_env = dict(os.environ)
    full_env.pop("BRIDGED_TOKEN", None)
    if env:
        full_env.update(env)
    proc = subprocess.run([bridged_bin(), *args], capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env=full_env)
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


@pytest.fixture
def daemon_factory():
    started: list[Daemon] = []

    def start(*args: str, **kwargs) -> Daemon:
        d = start_daemon(*args, **kwargs)
        started.append(d)
        return d

    yield start
    for d in started:
        d.stop_if_running()


@pytest.fixture
def daemon(daemon_factory) -> Daemon:
    return daemon_factory()


# ---------------------------------------------------------------------------------------------
# HTTP helpers


def http_request(daemon: Daemon, path: str, method: str = "GET", headers: dict | None = None,
                 timeout: float = 10.0):
    conn = http.client.HTTPConnection(daemon.connect_host, daemon.port, timeout=timeout)
    try:
        conn.request(method, path, headers=headers or {})
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body
    finally:
        conn.close()


def raw_http(daemon: Daemon, request: bytes, timeout: float = 10.0) -> bytes:
    """Sends bytes as they are (no path normalisation) and returns everything until close."""
    with socket.create_connection((daemon.connect_host, daemon.port), timeout=timeout) as s:
        s.sendall(request)
        chunks = []
        while True:
            # The daemon keeps the connection alive; a complete response is enough.
            data = s.recv(65536)
            if not data:
                break
            chunks.append(data)
            joined = b"".join(chunks)
            head, sep, body = joined.partition(b"\r\n\r\n")
            if sep:
                m = re.search(rb"(?i)content-length:\s*(\d+)", head)
                if m and len(body) >= int(m.group(1)):
                    break
        return b"".join(chunks)


def status_of(response: bytes) -> int:
    m = re.match(rb"HTTP/1\.[01] (\d{3})", response)
    return int(m.group(1)) if m else -1


# ---------------------------------------------------------------------------------------------
# A minimal WebSocket client on a plain socket


OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


def wait_for_log(d, fragment: str, timeout: float = 30.0) -> bool:
    """Whether `fragment` shows up in daemon `d`'s stderr within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fragment in d.stderr():
            return True
        time.sleep(0.05)
    return False


def client_frame(opcode: int, payload: bytes, fin: bool = True, masked: bool = True,
                 key: bytes = b"\x00\x00\x00\x00") -> bytes:
    """A client frame, masked with `key` (or, `masked=False`, unmasked: a protocol error). A zero
    masking key is legal and leaves the payload as it is (cheap for big frames)."""
    header = bytes([(0x80 if fin else 0) | opcode])
    bit = 0x80 if masked else 0
    n = len(payload)
    if n < 126:
        header += bytes([bit | n])
    elif n < 65536:
        header += bytes([bit | 126]) + struct.pack("!H", n)
    else:
        header += bytes([bit | 127]) + struct.pack("!Q", n)
    if not masked:
        return header + payload
    if key == b"\x00\x00\x00\x00":
        return header + key + payload
    return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


class RawWebSocket:
    """Blocking client with full control over frames. `recv_frame` returns (fin, opcode, payload)."""

    def __init__(self, host: str, port: int, path: str = "/bridge", origin: str | None = None,
                 timeout: float = 10.0, rcvbuf: int | None = None):
        self.sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect((host, port))
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [f"GET {path} HTTP/1.1", f"Host: {host}:{port}", "Upgrade: websocket",
                 "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
        if origin:
            lines.append(f"Origin: {origin}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            data = self.sock.recv(4096)
            if not data:
                raise ConnectionError(f"closed during handshake: {self.buf!r}")
            self.buf += data
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        self.status = status_of(head)
        if self.status != 101:
            raise ConnectionRefusedError(f"handshake refused with {self.status}: {head!r}")

    @classmethod
    def to(cls, daemon: Daemon, **kwargs) -> "RawWebSocket":
        return cls(daemon.connect_host, daemon.port, **kwargs)

    def send_frame(self, opcode: int, payload: bytes, fin: bool = True) -> None:
        self.sock.sendall(client_frame(opcode, payload, fin))

    def send_text(self, text: str | bytes) -> None:
        self.send_frame(OP_TEXT, text.encode() if isinstance(text, str) else text)

    def _read(self, n: int) -> bytes:
        while len(self.buf) < n:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("connection closed by the server")
            self.buf += data
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv_frame(self):
        b0, b1 = self._read(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self._read(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self._read(8))[0]
        if b1 & 0x80:
            raise AssertionError("server frames must not be masked")
        return bool(b0 & 0x80), b0 & 0x0F, self._read(n)

    def recv_message(self):
        """Next data message (fragments joined); control frames are skipped, except close which
        raises `Closed`."""
        parts, opcode = [], None
        while True:
            fin, op, payload = self.recv_frame()
            if op == OP_CLOSE:
                raise Closed(payload)
            if op in (OP_PING, OP_PONG):
                continue
            if opcode is None:
                opcode = op
            parts.append(payload)
            if fin:
                return opcode, b"".join(parts)

    def recv_close_code(self) -> int | None:
        """Reads until the close frame; returns its code (None if the socket just ended)."""
        try:
            while True:
                fin, op, payload = self.recv_frame()
                if op == OP_CLOSE:
                    return struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
        except ConnectionError:
            return None

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class Closed(Exception):
    def __init__(self, payload: bytes):
        self.code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
        self.reason = payload[2:].decode(errors="replace")
        super().__init__(f"closed {self.code} {self.reason}")
