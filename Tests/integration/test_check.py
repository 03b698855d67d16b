"""Record, replay and diagram (`serve --record`, `bridged replay`, `bridged diagram`), and
`bridged check` against real pages."""
import asyncio
import json
import pathlib
import subprocess

from bridgeclient import controller, ids, page
from conftest import bridged_bin, start_daemon

APP = "http://127.0.0.1/app/"


def run_cli(*args, timeout=120):
    p = subprocess.run([bridged_bin(), *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def record_seed(tmp_path):
    """A daemon recording into tmp_path/rec while a controller and two pages walk part of the
    seed scenario (PWA navigations, one left to the fallback timer, backs, a classic
    navigation, a bad frame); returns the trace file."""
    rec = tmp_path / "rec"
    d = start_daemon("--record", str(rec), "--foreground-timeout-ms", "200")
    try:
        async def scenario():
            ws = d.ws_url
            ctl = await controller(ws)
            a = await page(ws, url=APP)
            sid = a.hello["session"]
            await a.request("pwa-navigate", {"url": APP + "#/a"})
            await a.request("pwa-rendered")
            await a.request("pwa-navigate", {"url": APP + "#/b"})
            await ctl.next_event("foreground.removed", where=lambda p: p["reason"] == "timeout")
            r = await ctl.request("navigation.back", {"session": sid})
            assert r["action"] == "swap"
            await a.request("pwa-rendered")
            await a.send_raw("not json")
            await a.event("navigate", {"url": APP + "classic.html"})
            load = await a.next_event("load")
            b = await page(ws, url=load["pageUrl"], claim=load)
            assert ids(b.hello["stack"]) == "P1 W1 W2"
            await ctl.request("navigation.back", {"session": sid})
            await ctl.request("session.get", {"session": sid})
            for c in (a, b, ctl):
                await c.close()
        asyncio.run(scenario())
    finally:
        assert d.stop() == 0
    files = list(rec.glob("*.jsonl"))
    assert len(files) == 1, files
    return files[0]


def test_recorded_session_replays_to_identical_frames(tmp_path):
    trace = record_seed(tmp_path)
    lines = trace.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["trace"] == "bridged" and header["format"] == 1
    kinds = [json.loads(l)["k"] for l in lines[1:]]
    for k in ("connect", "in", "out", "timer", "schedule", "stack", "snapshot", "disconnect"):
        assert k in kinds, k
    code, out, err = run_cli("replay", str(trace))
    assert code == 0, out + err
    assert "identical" in out


def test_edited_frame_is_reported_at_its_line(tmp_path):
    trace = record_seed(tmp_path)
    lines = trace.read_text().splitlines()
    n = next(i for i, l in enumerate(lines) if '"k":"out"' in l and '\\"placeholder\\":\\"P1\\"' in l)
    lines[n] = lines[n].replace('\\"placeholder\\":\\"P1\\"', '\\"placeholder\\":\\"P9\\"', 1)
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(lines) + "\n")
    code, out, err = run_cli("replay", str(edited))
    assert code == 1, out + err
    assert f"{edited}:line {n + 1}:" in out
    assert "P9" in out and "P1" in out


def test_replay_cannot_run(tmp_path):
    trace = record_seed(tmp_path)
    lines = trace.read_text().splitlines()
    old = tmp_path / "old.jsonl"
    old.write_text("\n".join([lines[0].replace('"format":1', '"format":0')] + lines[1:]) + "\n")
    code, out, err = run_cli("replay", str(old))
    assert code == 2
    assert "format 0" in err and "record it again" in err
    code, _, err = run_cli("replay", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "cannot read" in err
    junk = tmp_path / "junk.jsonl"
    junk.write_text("hello\n")
    code, _, err = run_cli("replay", str(junk))
    assert code == 2 and "not a bridged trace" in err


def test_diagram_prints_every_stack_in_boxes(tmp_path):
    trace = record_seed(tmp_path)
    code, out, err = run_cli("diagram", str(trace))
    assert code == 0, err
    assert "| P1 | | W1(*P) |" in out
    assert "P1 W1(*P)~ W2(*C)" in out
    assert "pwa-navigate from" in out


def test_check_exit_2_when_it_cannot_run(tmp_path):
    # Nothing listens on the port of a socket that was closed.
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    code, out, err = run_cli("check", f"http://127.0.0.1:{port}/")
    assert code == 2
    assert "page unreachable" in err and "Connection refused" in err

    code, _, err = run_cli("check")
    assert code == 2 and "Missing expected argument" in err
    code, _, err = run_cli("check", "--bogus", "http://127.0.0.1/")
    assert code == 2 and "Unknown option" in err
    code, _, err = run_cli("check", "ftp://example/")
    assert code == 2 and "not an http(s) URL" in err
    code, _, err = run_cli("check", "--max-states", "0", "http://127.0.0.1/")
    assert code == 2 and "--max-states must be between 1 and 1000" in err
    code, _, err = run_cli("check", "--budget-ms", "0", "http://127.0.0.1/")
    assert code == 2 and "--budget-ms must be at least 1" in err
    bad = tmp_path / "steps.yaml"
    bad.write_text("- click: a\n- jump: b\n")
    code, _, err = run_cli("check", "--steps", str(bad), "http://127.0.0.1/")
    assert code == 2 and "step 2 (line 2): unknown step `jump`" in err


def test_check_exit_2_without_chromium(daemon_factory):
    app = daemon_factory("--static", str(pathlib.Path(__file__).resolve().parents[2] / "js-client/demo"))
    code, _, err = run_cli("check", "--chromium", "/nonexistent/chromium", app.url + "/app/")
    assert code == 2
    assert "no Chromium" in err and "apt-get install chromium" in err
