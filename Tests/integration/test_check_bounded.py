"""`bridged check` never hangs and says what it saw: pages that stop answering (a JavaScript
dialog, a script that never returns), a navigation loop, a click whose page takes 3 s, an `expect` that holds only
after a while, a Hotwire app with an alert() page, and a check stopped by SIGINT or SIGTERM
(Tests/integration/check_hang_apps.py serves the pages).

A daemon that answers dialogs itself (`session.create {dialogs}`, `webview.dialog` events) shows
a dialog as a row of the table and the page goes on; one that does not leaves the page blocked,
which the check reports as `page-unresponsive` naming the page. Either way the check ends with a
verdict, well within its bars."""
import os
import signal
import subprocess
import time

import pytest

import check_hang_apps
from conftest import bridged_bin
from test_check import broken_rules, needs_chromium, states_of


@pytest.fixture(scope="module")
def hang():
    a = check_hang_apps.serve()
    yield a
    a.stop()


def timed_check(*args, ceiling):
    """Runs `bridged check`, which must end within `ceiling` seconds; (code, out, err, seconds)."""
    t0 = time.monotonic()
    p = subprocess.run([bridged_bin(), "check", *args], capture_output=True, text=True, timeout=ceiling)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


def rows(out):
    return [l.split() for l in out.splitlines() if l[:1].isdigit()]


def dialog_rows(out):
    """The table's dialog rows (a dialog before the first step is step `-`)."""
    return [l for l in out.splitlines() if l.split()[2:3] == ["dialog"]]


def says_what_it_saw(out, err, page, dialog):
    """Either the daemon answered the dialog (a row says which, and how), or the page was left
    blocked and the finding names it; never a network error or "no link found"."""
    if dialog_rows(out):
        assert any(f'alert("{dialog}") dismissed' in l for l in dialog_rows(out)), out
    else:
        assert "page-unresponsive" in broken_rules(out), out + err
        assert f"BROKEN page-unresponsive" in out and f"the page {page} in W" in out and "stopped answering" in out, out
    for wrong in ("network", "no link found", "did not connect"):
        assert wrong not in out + err, out + err


@needs_chromium
def test_an_alert_start_page_gets_a_verdict_within_90_s_the_same_every_run(hang):
    verdicts = []
    for _ in range(2):
        code, out, err, s = timed_check(hang.url + "/alert/", ceiling=90)
        assert code in (0, 1), out + err
        says_what_it_saw(out, err, "/alert/", "Welcome to the menu")
        verdicts.append((code, broken_rules(out), [r[2:] for r in rows(out)]))
    assert verdicts[0] == verdicts[1], verdicts


@needs_chromium
def test_a_busy_start_page_is_unresponsive_not_unreachable(hang):
    code, out, err, s = timed_check(hang.url + "/busy/", ceiling=90)
    assert code == 1, out + err
    assert "page-unresponsive" in broken_rules(out), out
    assert "the page /busy/ in W1 stopped answering (a script that never returns" in out, out
    assert "nothing could be explored: the start page /busy/ stopped answering" in out, out
    for wrong in ("network", "no link found", "did not connect", "did not load"):
        assert wrong not in out + err, out + err


@needs_chromium
def test_a_page_that_hangs_after_a_tap_is_a_finding_and_exploring_goes_on(hang, tmp_path):
    junit = tmp_path / "busy.xml"
    code, out, err, s = timed_check(hang.url + "/busy-link/", "--junit", str(junit), ceiling=90)
    assert code == 1, out + err
    assert broken_rules(out) == ["page-unresponsive"], out
    assert "the page /busy-link/busy in W2 stopped answering" in out, out
    # The other link was explored after it, from the start page (the frozen tab popped).
    assert states_of(out) == ["/busy-link/", "/busy-link/busy", "/busy-link/quiet"], out
    assert [l for l in out.splitlines() if "/busy-link/busy  (" in l][0].endswith("BROKEN"), out
    assert 'type="page-unresponsive"' in junit.read_text()


@needs_chromium
def test_steps_on_a_frozen_page_fail_at_once_saying_so(hang, tmp_path):
    steps = tmp_path / "busy.yaml"
    steps.write_text('- click: "#busy"\n- click: "a"\n- expect: {title: "Busy later"}\n- back\n- expect: {stack: "W1"}\n- click: "#quiet"\n'
                     '- expect: {title: "Quiet busy"}\n')
    code, out, err, s = timed_check(hang.url + "/busy-link/", "--steps", str(steps), ceiling=90)
    assert code == 1, out + err
    assert broken_rules(out) == ["page-unresponsive"], out
    assert "step 2 failed: click: a: page-unresponsive: the page of W2 stopped answering" in out, out
    assert "step 3 failed: expect: {title: Busy later}: the page of W2 stopped answering" in out, out
    # Back from the frozen page, the app goes on.
    for n in (4, 5, 6, 7):
        assert f"step {n} failed" not in out, out


@needs_chromium
def test_a_click_waits_for_the_page_it_began_to_load(hang, tmp_path):
    """The server answers the page (a link in the app, a link to another origin, a GET form)
    after 3 s: the tap's step waits for it, so the new web view is the tap's row, and the
    expect that follows holds."""
    steps = tmp_path / "slow.yaml"
    steps.write_text('- click: "#slow"\n- expect: {stack: "W1 W2", title: "Slow page"}\n- back\n'
                     '- click: "#slow-other"\n- expect: {title: "Slow page"}\n- back\n'
                     '- click: "#go"\n- expect: {title: "Results"}\n')
    code, out, err, s = timed_check(hang.url + "/slow-nav/", "--steps", str(steps), ceiling=120)
    assert "failed" not in out, out + err
    classic = [r for r in rows(out) if r[2] == "classic"]
    assert [(r[0], r[1]) for r in classic] == [("1", "W2"), ("4", "W3"), ("7", "W4")], out
    assert classic[1][5] == hang.url.replace("127.0.0.1", "localhost") + "/slow-nav/page", out
    # The link to another origin is a trap (no routing configuration), nothing else.
    assert broken_rules(out) == ["external-link-trap"], out


@needs_chromium
def test_expect_is_compared_again_until_it_holds(hang, tmp_path):
    steps = tmp_path / "cycle.yaml"
    steps.write_text('- expect: {title: "Ready"}\n')
    code, out, err, s = timed_check(hang.url + "/cycle/", "--steps", str(steps), ceiling=90)
    assert code == 0, out + err
    # One that never holds fails once its timeout has passed, saying what it saw last.
    steps.write_text('- expect: {title: "Never"}\n')
    code, out, err, s = timed_check(hang.url + "/cycle/", "--steps", str(steps), "--timeout-s", "3", ceiling=90)
    assert code == 1, out + err
    assert 'step 1 failed: expect: {title: Never}: the title is "Ready", expected "Never" (compared again for 3 s, --timeout-s)' in out, out
    assert s >= 3, s


@needs_chromium
@pytest.mark.skipif(not os.path.exists(check_hang_apps.TURBO), reason="no Turbo: run scripts/fetch-turbo.sh (install-deps --test does)")
def test_a_hotwire_app_with_an_alert_page_is_explored_within_2_minutes(hang):
    code, out, err, s = timed_check(hang.url + "/hwdemo/", "--profile", "hotwire-native", ceiling=120)
    assert code in (0, 1), out + err
    assert s < 120, s
    says_what_it_saw(out, err, "/hwdemo/menu", "Menu connected")
    states = states_of(out)
    assert len(states) == 1 + len(check_hang_apps.HWDEMO_PAGES) + 2, out
    assert "/hwdemo/menu" in states and "/hwdemo/slow" in states, out
    # The visit to the 3-s page was waited for: its row has its render time.
    [slow] = [r for r in rows(out) if r[2] == "push" and r[5] == "/hwdemo/slow"]
    assert int(slow[7]) >= 3000, out


@needs_chromium
def test_a_navigation_loop_is_a_finding(hang):
    """Each page loads the next one, a new web view each: the daemon refuses tabs past the
    session's limit (session.limit), which the check reports, and it ends."""
    code, out, err, s = timed_check(hang.url + "/loop/", ceiling=90)
    assert code == 1, out + err
    assert "navigation-loop" in broken_rules(out), out
    assert "a page kept opening web views (up to /loop/?n=" in out and "the session reached its limit of " in out, out
    assert "session.limit {limit: tabs, max: " in out, out


def children(pid):
    """The pids whose parent is `pid` (from /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(d))
    return out


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(what, f, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = f()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@needs_chromium
@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_checks_daemon_and_chromium(hang, sig, code):
    p = subprocess.Popen([bridged_bin(), "check", hang.url + "/menu/"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Its daemon, then the daemon's Chromium, once they run.
        daemon = wait_for("the check's daemon", lambda: children(p.pid))[0]
        chromium = wait_for("the daemon's Chromium", lambda: children(daemon))[0]
        os.kill(p.pid, sig)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == code, out + err
    name = "SIGINT" if sig == signal.SIGINT else "SIGTERM"
    assert f"stopped by {name}" in err and "nothing was judged" in err, err
    assert "the connection to the checker's own daemon failed" not in err, err
    # Both were stopped, not left running (the daemon is in a process group of its own, which a
    # terminal's Ctrl-C does not reach).
    wait_for("the daemon to be gone", lambda: not alive(daemon), timeout=15)
    wait_for("Chromium to be gone", lambda: not alive(chromium), timeout=15)


def test_dialogs_option_is_checked():
    p = subprocess.run([bridged_bin(), "check", "--dialogs", "maybe", "http://127.0.0.1/"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "--dialogs must be accept or dismiss (got maybe)" in p.stderr
    p = subprocess.run([bridged_bin(), "check", "--help"], capture_output=True, text=True, timeout=60)
    assert "--dialogs" in p.stdout
