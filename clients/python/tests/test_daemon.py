"""Daemon: finding the binary, starting, learning the port, health, stopping, clear errors."""
import os
import signal
import stat
import subprocess
import sys
import textwrap
import urllib.request

import pytest

import bridged


def test_the_fixture_daemon_serves_and_knows_its_addresses(bridged_daemon):
    assert bridged_daemon.base_url.startswith("http://127.0.0.1:")
    assert bridged_daemon.url("/healthz") == bridged_daemon.base_url + "/healthz"
    assert bridged_daemon.url("app/astro.html") == bridged_daemon.base_url + "/app/astro.html"
    assert bridged_daemon.ws_url == f"ws://127.0.0.1:{bridged_daemon.port}/bridge"
    assert bridged_daemon.health()["ok"] is True
    with urllib.request.urlopen(bridged_daemon.url("/app/astro.html")) as r:  # --bridged-static
        assert b"Astro" in r.read()
    assert bridged_daemon.argv[1:4] == ["serve", "--port", "0"]



def test_devtools_url_needs_a_daemon_with_devtools(bridged_daemon):
    with pytest.raises(bridged.DaemonError) as no:
        bridged_daemon.devtools_url()
    assert str(no.value).startswith("GET /api/devtools: 404 ") and "--devtools" in str(no.value)


def test_start_and_stop(tmp_path):
    with bridged.Daemon(args=["--drain-ms", "0"]) as d:
        pid = d.process.pid
        assert d.returncode is None
    assert d.returncode == 0, "SIGTERM: a clean exit"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert "bridged" in d.stderr(), "its log is kept after it stopped"


def test_config_and_static_are_passed_on(tmp_path):
    config = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "app.yaml")
    with bridged.Daemon(static=str(tmp_path), config=config, args=["--drain-ms", "0"]) as d:
        assert d.argv[4:] == ["--static", str(tmp_path), "--config", config, "--drain-ms", "0"]
        with d.controller() as c:
            assert "route" in c.call("router.resolve", url=d.url("/app/"))


def test_binary_from_the_argument_then_bridged_bin_then_path(monkeypatch, tmp_path):
    real = os.environ["BRIDGED_BIN"]
    monkeypatch.delenv("BRIDGED_BIN")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(bridged.DaemonError) as e:
        bridged.Daemon()
    message = str(e.value)
    assert "BRIDGED_BIN" in message and "binary=" in message and "--bridged-binary" in message
    os.symlink(real, tmp_path / "bridged")
    assert bridged.find_binary() == str(tmp_path / "bridged")
    monkeypatch.setenv("BRIDGED_BIN", real)
    assert bridged.find_binary() == real
    assert bridged.find_binary(str(tmp_path / "bridged")) == str(tmp_path / "bridged")
    with pytest.raises(bridged.DaemonError) as e:
        bridged.Daemon(binary=str(tmp_path / "missing"))
    assert "missing is not an executable" in str(e.value)
    monkeypatch.setenv("BRIDGED_BIN", str(tmp_path / "gone"))
    with pytest.raises(bridged.DaemonError) as e:
        bridged.Daemon()
    assert "$BRIDGED_BIN" in str(e.value)


def test_a_daemon_that_exits_early_shows_its_stderr():
    d = bridged.Daemon(args=["--instance", "NOT VALID"])
    with pytest.raises(bridged.DaemonError) as e:
        d.start()
    assert e.value.returncode not in (None, 0)
    assert "--instance" in e.value.stderr
    assert "exited" in str(e.value) and e.value.stderr in str(e.value)
    assert d.returncode is not None, "nothing left running"


def test_missing_static_or_config_is_refused_before_starting(tmp_path):
    with pytest.raises(bridged.DaemonError, match="static="):
        bridged.Daemon(static=str(tmp_path / "none"))
    with pytest.raises(bridged.DaemonError, match="config="):
        bridged.Daemon(config=str(tmp_path / "none.yaml"))


def _fake(tmp_path, body):
    """A stand-in daemon in Python (it prints `listening on` and answers /healthz)."""
    path = tmp_path / "fake-bridged"
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


SERVING_FAKE = """
    import http.server, signal, sys, threading
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = b'{"ok": true}'
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
            self.wfile.write(body)
        def log_message(self, *a): pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    s = http.server.HTTPServer(("127.0.0.1", 0), H)
    print(f"listening on http://127.0.0.1:{s.server_address[1]}", flush=True)
    s.serve_forever()
"""


def test_a_daemon_that_ignores_sigterm_is_killed_after_the_grace(tmp_path):
    with bridged.Daemon(binary=_fake(tmp_path, SERVING_FAKE), stop_grace=0.5) as d:
        assert d.health() == {"ok": True}
    assert d.returncode == -signal.SIGKILL


def test_a_daemon_that_never_listens_is_stopped_with_a_clear_error(tmp_path):
    silent = _fake(tmp_path, "import sys, time\nsys.stderr.write('thinking\\n'); sys.stderr.flush()\ntime.sleep(60)\n")
    d = bridged.Daemon(binary=silent, start_timeout=2)
    with pytest.raises(bridged.DaemonError) as e:
        d.start()
    assert "no 'listening on' line" in str(e.value) and "thinking" in e.value.stderr
    assert d.returncode is not None


def test_a_daemon_that_is_never_healthy_is_stopped(tmp_path):
    unhealthy = _fake(tmp_path, SERVING_FAKE.replace('{"ok": true}', '{"ok": false}'))
    d = bridged.Daemon(binary=unhealthy, start_timeout=2)
    with pytest.raises(bridged.DaemonError) as e:
        d.start()
    assert "/healthz not healthy" in str(e.value)
    assert d.returncode == -signal.SIGKILL


def test_a_daemon_not_started_says_so():
    d = bridged.Daemon()
    with pytest.raises(bridged.DaemonError, match="not started"):
        d.url("/")
    assert d.stop() is None
