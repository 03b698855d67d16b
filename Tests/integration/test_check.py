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


# --- bridged check against real pages in Chromium -------------------------------------------

import shutil
import xml.etree.ElementTree as ET

import pytest

DEMO = pathlib.Path(__file__).resolve().parents[2] / "js-client/demo"
BROKEN = DEMO / "broken"
RULES = ["dom-before-reply", "push-without-navigate", "navigate-on-pop-or-replace", "render-timeout",
         "no-render-after-back", "back-wrong-state", "external-link-trap", "page-error"]

def _browser_sessions() -> str | None:
    """Why the real-browser checks cannot run here, or None."""
    if shutil.which("chromium") is None:
        return "chromium is not installed (scripts/install-deps.sh --test installs it)"
    if "--chromium" not in run_cli("serve", "--help")[1]:
        return "this bridged has no browser sessions"
    return None


needs_chromium = pytest.mark.skipif(_browser_sessions() is not None, reason=str(_browser_sessions()))


@pytest.fixture(scope="module")
def app_server():
    """The demo apps, served by a plain bridged (/app/ and /bridge.js)."""
    d = start_daemon("--static", str(DEMO))
    yield d
    d.stop()


def check(*args, timeout=300):
    return run_cli("check", *args, timeout=timeout)


def broken_rules(out):
    return sorted({line.split()[1] for line in out.splitlines() if line.startswith("BROKEN ")})


@needs_chromium
@pytest.mark.parametrize("rule", RULES)
def test_each_broken_demo_breaks_exactly_its_rule(app_server, rule, tmp_path):
    url = f"{app_server.url}/app/broken/{rule}/index.html"
    junit = tmp_path / "check.xml"
    if rule == "external-link-trap":
        code, out, err = check(url, "--max-states", "5", "--junit", str(junit))
    else:
        code, out, err = check(url, "--steps", str(BROKEN / "steps.yaml"), "--junit", str(junit))
    assert code == 1, out + err
    assert broken_rules(out) == [rule], out
    assert out.splitlines()[-1].startswith("NOT app-aware")
    failures = [f.get("type") for f in ET.parse(junit).getroot().iter("failure")]
    assert failures == [rule], failures


@needs_chromium
def test_well_behaved_passes_with_steps_and_exploring(app_server, tmp_path):
    url = f"{app_server.url}/app/broken/well-behaved/index.html"
    code, out, err = check(url, "--steps", str(BROKEN / "steps.yaml"))
    assert code == 0, out + err
    assert out.splitlines()[-1].startswith("app-aware")
    assert " push " in out and " back " in out
    code, out, err = check(url, "--max-states", "4")
    assert code == 0, out + err


@needs_chromium
def test_demo_pwa_passes_with_steps_and_exploring(app_server, tmp_path):
    steps = tmp_path / "demo.yaml"
    steps.write_text("""
- expect: {stack: "W1"}
- click: "#nav-products"
- expect: {stack: "P1 W1(*P)", title: "Products – demo PWA"}
- click: "#product-1"
- expect: {stack: "P1 P2 W1(*P)"}
- back
- expect: {stack: "P1 W1(*P)"}
- back
- expect: {stack: "W1(*P)"}
""")
    junit, report, trace = tmp_path / "demo.xml", tmp_path / "demo.html", tmp_path / "demo.jsonl"
    code, out, err = check(f"{app_server.url}/app/", "--steps", str(steps), "--junit", str(junit),
                           "--report", str(report), "--trace", str(trace))
    assert code == 0, out + err
    # JUnit: testsuites > testsuite > testcase (one per step and per rule), no failure.
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    cases = suites[0].findall("testcase")
    assert len(cases) == 9 + 8 and int(suites[0].get("tests")) == len(cases)
    assert suites[0].get("failures") == "0" and not list(root.iter("failure"))
    assert all(c.get("classname") in ("steps", "rules") and c.get("name") for c in cases)
    html = report.read_text()
    assert "app-aware" in html and 'class="item P">P1</span>' in html
    assert "data:image/jpeg;base64," in html  # the placeholders' snapshots inline
    # The run's trace replays.
    code, out, err = run_cli("replay", str(trace))
    assert code == 0, out + err
    code, out, err = check(f"{app_server.url}/app/", "--max-states", "6")
    assert code == 0, out + err


@needs_chromium
def test_astro_demo_passes_with_steps_and_exploring(app_server, tmp_path):
    steps = tmp_path / "astro.yaml"
    steps.write_text("""
- click: "#astro-deals"
- expect: {stack: "P1 W1(*P)"}
- click: "#astro-help"
- back
- back
- expect: {stack: "W1(*P)"}
""")
    code, out, err = check(f"{app_server.url}/app/astro.html", "--steps", str(steps))
    assert code == 0, out + err
    code, out, err = check(f"{app_server.url}/app/astro.html", "--max-states", "4")
    assert code == 0, out + err


@needs_chromium
def test_a_failed_expectation_is_exit_1(app_server, tmp_path):
    steps = tmp_path / "wrong.yaml"
    steps.write_text('- click: "#to-a"\n- expect: {stack: "W1", title: "nope"}\n')
    junit = tmp_path / "wrong.xml"
    code, out, err = check(f"{app_server.url}/app/broken/well-behaved/index.html", "--steps", str(steps), "--junit", str(junit))
    assert code == 1, out + err
    assert "step 2 failed" in out and "the stack is P1 W1(*P), expected W1" in out
    assert [f.get("type") for f in ET.parse(junit).getroot().iter("failure")] == ["step"]
