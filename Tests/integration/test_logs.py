"""Logs a machine can read (`--log-format json`: one JSON object per line) and logs no client can
use to drive a terminal: whatever a client sends (urls, origins, methods) is escaped."""

from __future__ import annotations

import json

import bridged
from conftest import RawWebSocket, run_daemon_expect_exit

EVIL_URL = "http://127.0.0.1/app/\x1b[31mred\x1b[0m\nfake line\x07\u009b2J"
EVIL_ORIGIN = "http://evil.example\x1b[2J"


def exercise(d):
    """A page whose urls carry control characters, a refused upgrade whose Origin does too."""

    with bridged.Connection(d.ws_url) as page:
        page.say_hello("page", url=EVIL_URL)
        page.send({"event": "navigate", "params": {"url": EVIL_URL + "/next"}})
        # The navigation sends this page elsewhere: `load`, then the close.
        page.wait_event("load", timeout=15)
    try:
        RawWebSocket.to(d, origin=EVIL_ORIGIN)
        raise AssertionError("a foreign origin was accepted")
    except ConnectionRefusedError:
        pass


def test_json_log_lines(daemon_factory):
    d = daemon_factory("--log-format", "json", "--log-level", "debug")
    exercise(d)
    assert d.stop() == 0
    raw = open(d.stderr_path, "rb").read()
    assert b"\x1b" not in raw and b"\x07" not in raw and "\u009b".encode() not in raw
    lines = raw.decode().splitlines()
    assert lines, "no log lines"
    records = [json.loads(line) for line in lines]  # every line is one JSON object
    for r in records:
        assert isinstance(r, dict) and {"timestamp", "level", "label", "message"} <= r.keys(), r
        assert r["level"] in ("trace", "debug", "info", "notice", "warning", "error", "critical")
    # The client's url came through, intact once decoded.
    assert any(EVIL_URL + "/next" in r["message"] for r in records), [r["message"] for r in records]
    assert any(r["message"] == "listening" for r in records)
    assert records[-1]["message"] == "bye"


def test_text_log_lines_escape_control_characters(daemon_factory):
    d = daemon_factory("--log-level", "debug")
    exercise(d)
    assert d.stop() == 0
    raw = open(d.stderr_path, "rb").read()
    assert b"\x1b" not in raw and b"\x07" not in raw and "\u009b".encode() not in raw
    text = raw.decode()
    assert "\\u{1b}[31mred\\u{1b}[0m\\u{a}fake line\\u{7}" in text
    assert not any(line.startswith("fake line") for line in text.splitlines()), "a url must not start a log line"


def test_bad_log_format_is_refused():
    code, out, err = run_daemon_expect_exit("--log-format", "xml", "--port", "0")
    assert code != 0
    # Parsed by ArgumentParser, which names the flag and the accepted values.
    assert "--log-format" in err and "'text'" in err and "'json'" in err
