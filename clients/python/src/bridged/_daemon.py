"""Starting and stopping a bridged daemon for tests and harnesses."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from typing import IO, Any, Dict, List, Optional, Sequence

from ._controller import Controller
from ._errors import DaemonError

_LISTENING = re.compile(r"^listening on http://(\[[0-9a-fA-F:]+\]|[^:/\s]+):(\d+)\s*$")

#: Seconds ``Daemon`` waits for ``listening on ...`` and a healthy ``/healthz``.
DEFAULT_START_TIMEOUT = 30.0
#: Seconds ``Daemon.stop`` waits after SIGTERM before it kills the daemon. SIGTERM drains for
#: ``--drain-ms`` (1 s by default) and stops Chromium (up to 2 s) first.
DEFAULT_STOP_GRACE = 15.0


def find_binary(binary: Optional[str] = None) -> str:
    """The bridged executable: ``binary``, else ``$BRIDGED_BIN``, else ``bridged`` on PATH."""
    if binary is None:
        binary = os.environ.get("BRIDGED_BIN") or None
        origin = "$BRIDGED_BIN"
    else:
        origin = "binary="
    if binary is None:
        found = shutil.which("bridged")
        if found is None:
            raise DaemonError("no bridged binary: pass Daemon(binary=PATH) (pytest: --bridged-binary PATH), "
                              "set BRIDGED_BIN=PATH, or put bridged on PATH "
                              "(apt install ./bridged_VERSION_amd64.deb, or build it: swift build -c release)")
        return found
    path = binary if os.sep in binary else (shutil.which(binary) or binary)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise DaemonError(f"{origin}{binary} is not an executable file")
    return path


class Daemon:
    """A ``bridged serve --port 0`` of its own, as a context manager.

    ``Daemon(binary=None, static=None, config=None, args=())`` runs
    ``BINARY serve --port 0 [--static STATIC] [--config CONFIG] ARGS...``: the binary is ``binary``,
    else ``$BRIDGED_BIN``, else ``bridged`` on PATH. It learns the port from the daemon's first
    line of output (``listening on http://HOST:PORT``), then waits until ``GET /healthz`` answers
    ``{"ok": true}``. On exit it stops the daemon: SIGTERM, then SIGKILL after ``stop_grace``
    seconds. A daemon that exits before it is healthy raises ``DaemonError`` with its stderr.

    ``env`` replaces the environment (default: this process's). A token (``--token T`` in
    ``args``, or ``BRIDGED_TOKEN``) is remembered and given to ``controller()``.
    """

    def __init__(
        self,
        binary: Optional[str] = None,
        static: Optional[str] = None,
        config: Optional[str] = None,
        args: Sequence[str] = (),
        *,
        env: Optional[Dict[str, str]] = None,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        stop_grace: float = DEFAULT_STOP_GRACE,
    ) -> None:
        self.binary = find_binary(binary)
        self.argv: List[str] = [self.binary, "serve"]
        if not any(str(a) == "--port" or str(a).startswith("--port=") for a in args):
            self.argv += ["--port", "0"]
        if static is not None:
            if not os.path.isdir(static):
                raise DaemonError(f"static={static}: no such directory")
            self.argv += ["--static", os.fspath(static)]
        if config is not None:
            if not os.path.isfile(config):
                raise DaemonError(f"config={config}: no such file")
            self.argv += ["--config", os.fspath(config)]
        self.argv += [str(a) for a in args]
        self.env = dict(os.environ if env is None else env)
        self.token: Optional[str] = self.env.get("BRIDGED_TOKEN") or None
        for i, a in enumerate(args):
            if str(a) == "--token" and i + 1 < len(args):
                self.token = str(args[i + 1])
            elif str(a).startswith("--token="):
                self.token = str(a)[len("--token="):]
        self.start_timeout = start_timeout
        self.stop_grace = stop_grace
        self.process: "Optional[subprocess.Popen[bytes]]" = None
        self.host = ""
        self.port = 0
        self._stderr_path: Optional[str] = None
        self._stderr_text = ""
        self._controllers: List[Controller] = []

    # -- addresses ------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT``, as the daemon printed it."""
        self._require_started()
        return f"http://{self.host}:{self.port}"

    def url(self, path: str = "/") -> str:
        """``http://HOST:PORT`` + ``path`` (``d.url("/app/astro.html")``)."""
        if not path.startswith("/"):
            path = "/" + path
        return self.base_url + path

    @property
    def ws_url(self) -> str:
        """The WebSocket endpoint, ``ws://HOST:PORT/bridge``."""
        self._require_started()
        return f"ws://{self.host}:{self.port}/bridge"

    def controller(self, **kwargs: Any) -> Controller:
        """A new ``Controller`` connected to this daemon (with its token); keyword arguments go to
        ``Controller``. It is closed with the daemon at the latest."""
        kwargs.setdefault("token", self.token)
        c = Controller(self.ws_url, **kwargs)
        self._controllers = [old for old in self._controllers if old._closed is None]
        self._controllers.append(c)
        return c

    def health(self) -> Any:
        """``GET /healthz`` as JSON (raises ``urllib.error.URLError`` when it cannot connect)."""
        try:
            with urllib.request.urlopen(self.url("/healthz"), timeout=5) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:  # 503 while draining: still a JSON answer
            return json.loads(e.read())

    def devtools_url(self) -> str:
        """The ``webSocketDebuggerUrl`` of the daemon's Chromium (``GET /api/devtools``, with the
        token): where Playwright's ``connect_over_cdp`` attaches. Needs ``--devtools``;
        ``DaemonError`` with the daemon's answer otherwise."""
        request = urllib.request.Request(self.url("/api/devtools"))
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=10) as r:
                return str(json.loads(r.read())["webSocketDebuggerUrl"])
        except urllib.error.HTTPError as e:
            raise DaemonError(f"GET /api/devtools: {e.code} {e.read().decode('utf-8', errors='replace').strip()}") from None

    def stderr(self) -> str:
        """What the daemon wrote to its standard error so far (its log; kept after it stopped)."""
        if self._stderr_path is None:
            return self._stderr_text
        with open(self._stderr_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def _forget_stderr_file(self) -> None:
        if self._stderr_path is not None:
            self._stderr_text = self.stderr()
            try:
                os.unlink(self._stderr_path)
            except OSError:
                pass
            self._stderr_path = None

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> "Daemon":
        """Starts the daemon and waits until it is healthy (``with Daemon() as d`` calls it)."""
        if self.process is not None:
            raise DaemonError("this Daemon was already started")
        stderr_file = tempfile.NamedTemporaryFile(prefix="bridged-", suffix=".log", delete=False)
        self._stderr_path = stderr_file.name
        try:
            self.process = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=stderr_file,
                                            stdin=subprocess.DEVNULL, env=self.env)
        except OSError as e:
            stderr_file.close()
            raise DaemonError(f"cannot run {self.binary}: {e}") from e
        finally:
            stderr_file.close()
        try:
            self._await_listening()
            self._await_healthy()
        except BaseException:
            self._kill()
            self._forget_stderr_file()
            raise
        return self

    def _failure(self, what: str) -> DaemonError:
        code = self.process.poll() if self.process else None
        status = f"it exited with {code}" if code is not None else "it is still running"
        err = self.stderr()
        return DaemonError(f"{' '.join(self.argv)}: {what} ({status}); its stderr:\n{err or '(empty)'}", err, code)

    def _await_listening(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        line: List[bytes] = []
        got = threading.Event()
        stdout: IO[bytes] = self.process.stdout

        def read() -> None:
            line.append(stdout.readline())
            got.set()
            try:  # keep reading, so the daemon never blocks on a full pipe
                while stdout.read(65536):
                    pass
            except (OSError, ValueError):
                pass

        threading.Thread(target=read, name="bridged-stdout", daemon=True).start()
        if not got.wait(self.start_timeout):
            raise self._failure(f"no 'listening on' line within {self.start_timeout} s")
        text = line[0].decode("utf-8", errors="replace").strip()
        m = _LISTENING.match(text)
        if not m:
            if self.process.poll() is None:
                try:  # the first line is written once the port accepts; give an exit time to land
                    self.process.wait(timeout=1)
                except subprocess.TimeoutExpired:
                    pass
            raise self._failure("the daemon exited early" if not text else f"unexpected first line {text!r}")
        self.host, self.port = m.group(1), int(m.group(2))
        if self.host in ("0.0.0.0", "[::]"):
            self.host = "127.0.0.1" if self.host == "0.0.0.0" else "[::1]"

    def _await_healthy(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.start_timeout
        delay = 0.01
        last: object = None
        while True:
            if self.process.poll() is not None:
                raise self._failure("the daemon exited early")
            try:
                last = self.health()
                if isinstance(last, dict) and last.get("ok") is True:
                    return
            except (OSError, ValueError) as e:
                last = e
            if time.monotonic() > deadline:
                raise self._failure(f"/healthz not healthy within {self.start_timeout} s (last answer: {last})")
            time.sleep(delay)  # /healthz sends no event: poll it, briefly
            delay = min(delay * 2, 0.2)

    def stop(self) -> Optional[int]:
        """Closes the controllers it made, sends SIGTERM, waits ``stop_grace`` seconds, then
        SIGKILL. Returns the exit code (0 after a clean SIGTERM); None if it never started."""
        for c in self._controllers:
            try:
                c.close(close_sessions=False)
            except Exception:
                pass
        self._controllers.clear()
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=self.stop_grace)
            except subprocess.TimeoutExpired:
                self._kill()
        self._forget_stderr_file()
        return self.process.returncode

    def _kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    @property
    def returncode(self) -> Optional[int]:
        """The exit code once the daemon exited, else None."""
        return None if self.process is None else self.process.poll()

    def _require_started(self) -> None:
        if not self.port:
            raise DaemonError("the daemon is not started: use `with Daemon(...) as d` or d.start()")

    def __enter__(self) -> "Daemon":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
