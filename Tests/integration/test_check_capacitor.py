"""`bridged check --profile capacitor` (docs/CHECK.md, "The capacitor profile") against an
Ionic-style Capacitor app (Tests/integration/capacitor_app/check: its own bundled stand-in of
@capacitor/core 8, Ionic-like elements with open shadow roots, client-side routes, a split pane
at tablet width): the healthy app passes by exploring on both platforms, at a phone and a tablet
width, served by a plain server or from --web-dir at https://localhost/; each fault of the app
(?mode=) breaks its rule with its evidence; a start page that fails exits 2. Each run has its own
TMPDIR, where its Chromium keeps its profile: no process may be left with it once the check
exited."""
import json
import os
import pathlib
import shutil
import tempfile

import pytest

from browser_sessions_support import serve_directory
from test_check import broken_rules, check, needs_chromium, run_cli
from test_check_hotwire import findings

APP_DIR = pathlib.Path(__file__).resolve().parent / "capacitor_app" / "check"
PLATFORMS = ["android", "ios"]


@pytest.fixture(scope="module")
def app():
    yield from serve_directory(APP_DIR)


def processes_with(text: str) -> list[str]:
    """The command lines of running processes that mention `text`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(f"{pid}: {cmdline[:200]}")
    return found


def run_check(url, platform, *args):
    """`bridged check URL --profile capacitor --platform P ARGS` with its own TMPDIR; returns
    (code, out, err) once it exited, and asserts its Chromium went with it."""
    # A short path: Chromium's sockets live under TMPDIR (a unix socket path has 107 bytes).
    tmp = tempfile.mkdtemp(prefix="bcc-", dir="/tmp")
    try:
        env = {**os.environ, "TMPDIR": tmp}
        code, out, err = check(url, "--profile", "capacitor", "--platform", platform, *args, env=env)
        assert processes_with(tmp) == [], "a process of the check is left: " + out + err
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return code, out, err


def deep_links(out):
    return [r.split()[5] for r in out.splitlines() if r.split()[2:3] == ["deeplink"]]


def states(out):
    return [l.split()[1] for l in out.splitlines() if l.startswith("  ") and l.strip()[:1].isdigit()]


@needs_chromium
@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_healthy_app_passes_exploring_at_a_phone_width(app, platform, tmp_path):
    code, out, err = run_check(app + "/", platform)
    assert code == 0, out + err
    # iOS has no hardware back: its two rules are not judged there.
    kept = 11 if platform == "android" else 9
    assert out.splitlines()[-1].startswith(f"app-aware: {kept} rules kept"), out
    reached = states(out)
    assert reached[0] == "/home", out  # the start screen once the app redirected
    # A link in a shadow root, a button, a tab without href, a plain button in a shadow root.
    for route in ["/items", "/account", "/settings", "/about", "/items/1"]:
        assert route in reached, (route, out)
    assert "example.com" not in out, "a link out of the app is never followed"
    if platform == "android":
        assert "Android's hardware back" in out, out
    # Deep links to the routes reached, each routed by the app's appUrlOpen listener.
    links = deep_links(out)
    assert len(links) == 3 and links[0] == "/items", out
    assert "BROKEN" not in out


@needs_chromium
@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_healthy_app_passes_at_a_tablet_width_from_its_web_dir(platform, tmp_path):
    # At 1024 CSS pixels the menu is a split pane beside the content (no menu button): its
    # ion-item router-links are what the explorer taps.
    report = tmp_path / "check.html"
    code, out, err = run_check("https://localhost/", platform, "--web-dir", str(APP_DIR), "--viewport", "1024x768",
                               "--report", str(report))
    assert code == 0, out + err
    reached = states(out)
    assert reached[0] == "/home" and len(reached) > 1, out
    assert {"/items", "/account", "/settings", "/about"} <= set(reached), out
    assert "ion-item[routerLink=\"/account\"]" in out, out
    assert deep_links(out)[:1] == ["/items"], out
    html = report.read_text()
    assert "deep-link-ignored" in html and ("back-exits-app" in html) == (platform == "android")


@needs_chromium
@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_web_dir_is_served_at_https_localhost(platform, tmp_path):
    code, out, err = run_check("https://localhost/?mode=reject", platform, "--web-dir", str(APP_DIR), "--max-states", "3")
    assert code == 1, out + err
    assert broken_rules(out) == ["plugin-rejection-unhandled"], out
    f = findings(out)["plugin-rejection-unhandled"][0]
    assert "Preferences.get() was rejected (Must provide key) and the app did not handle it" in f[0], f
    assert any("capacitor.call Preferences.get() {callbackId:" in e for e in f), f
    assert any("capacitor.result {callbackId:" in e and "success: false, error: {message: Must provide key}" in e for e in f), f
    assert any("(page) unhandled rejection: Must provide key" in e for e in f), f


@needs_chromium
def test_back_that_exits_at_an_inner_route_breaks_back_exits_app(app, tmp_path):
    code, out, err = run_check(app + "/?mode=exit-on-back", "android", "--max-states", "3")
    assert code == 1, out + err
    assert broken_rules(out) == ["back-exits-app"], out
    f = findings(out)["back-exits-app"][0]
    assert "Android's back at the inner route /items left the app: the app exited (App.exitApp)" in f[0], f
    assert any("hardware back (navigation.back): backButton" in e for e in f), f
    assert any("the app called App.exitApp()" in e for e in f) and any("session.closed: exit-app" in e for e in f), f
    assert "to fix back-exits-app:" in out
    assert "fresh session" in out, "the app ended: the next path starts in a fresh session"


@needs_chromium
def test_back_that_does_nothing_at_an_inner_route_breaks_back_does_nothing(app, tmp_path):
    code, out, err = run_check(app + "/?mode=stuck-back", "android", "--max-states", "3")
    assert code == 1, out + err
    assert broken_rules(out) == ["back-does-nothing"], out
    f = findings(out)["back-does-nothing"][0]
    assert "Android's back at the inner route /items did nothing: the url and the screen stayed the same" in f[0], f


@needs_chromium
def test_ios_has_no_back_rules(app, tmp_path):
    # The same faulty back handler: iOS has no hardware back, the explorer goes back in the page.
    code, out, err = run_check(app + "/?mode=exit-on-back", "ios", "--max-states", "3")
    assert code == 0, out + err
    assert "history.back()" in out


@needs_chromium
@pytest.mark.parametrize("platform", PLATFORMS)
def test_an_unavailable_plugin_breaks_plugin_unavailable(app, platform, tmp_path):
    code, out, err = run_check(app + "/?mode=unavailable", platform, "--max-states", "3")
    assert code == 1, out + err
    assert broken_rules(out) == ["plugin-unavailable"], out
    f = findings(out)["plugin-unavailable"][0]
    assert "the app called BarcodeScanner.scan() but the device has no BarcodeScanner plugin" in f[0], f
    # Listed as the app's own plugin (--capacitor), the call is no longer one the device lacks.
    official = ["App", "ActionSheet", "AppLauncher", "Browser", "Camera", "Clipboard", "Device", "Dialog", "Filesystem",
                "Geolocation", "Haptics", "Keyboard", "LocalNotifications", "Motion", "Network", "Preferences",
                "PushNotifications", "ScreenOrientation", "ScreenReader", "Share", "SplashScreen", "StatusBar", "TextZoom", "Toast"]
    options = tmp_path / "capacitor.json"
    options.write_text(json.dumps({"plugins": official + [{"name": "BarcodeScanner", "methods": ["scan"]}]}))
    code, out, err = run_check(app + "/?mode=unavailable", platform, "--max-states", "3", "--capacitor", str(options))
    assert code in (0, 1), out + err
    assert "plugin-unavailable" not in broken_rules(out), out


@needs_chromium
@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_deep_link_the_app_ignores_breaks_deep_link_ignored(app, platform, tmp_path):
    code, out, err = run_check(app + "/?mode=ignore-links", platform, "--max-states", "3")
    assert code == 1, out + err
    assert broken_rules(out) == ["deep-link-ignored"], out
    f = findings(out)["deep-link-ignored"][0]
    assert f"the deep link {app}/items (a route the app has) left the screen unchanged on /home" in f[0], f
    assert any("appUrlOpen delivered to the app's listener" in e for e in f), f


@needs_chromium
def test_a_start_page_that_fails_exits_2(app, tmp_path):
    code, out, err = run_check("https://localhost/missing.html", "android", "--web-dir", str(APP_DIR))
    assert code == 2, out + err
    assert "the start page https://localhost/missing.html" in err, err
    code, out, err = run_check(app + "/missing.html", "ios")
    assert code == 2, out + err
    assert "HTTP 404" in err, err


@needs_chromium
def test_steps_back_and_deeplink_are_the_devices(app, tmp_path):
    # With steps: `back` is Android's hardware back, `deeplink:` the system's appUrlOpen.
    steps = tmp_path / "steps.yaml"
    steps.write_text("\n".join([
        "- click: 'main ion-item[router-link=\"/items\"]'",
        "- expect: {url: '" + app + "/items'}",
        "- back",
        "- expect: {url: '" + app + "/home'}",
        "- deeplink: " + app + "/account",
        "- expect: {url: '" + app + "/account'}",
        "- back",
    ]) + "\n")
    code, out, err = run_check(app + "/", "android", "--steps", str(steps))
    assert code == 0, out + err
    rows = [l.split() for l in out.splitlines()]
    assert [r[2] for r in rows if r[2:3] in (["push"], ["back"], ["deeplink"])] == ["push", "back", "deeplink", "push", "back"], out
    # The same app with a faulty back: the step's back at /items exits the app.
    code, out, err = run_check(app + "/?mode=exit-on-back", "android", "--steps", str(steps))
    assert code == 1, out + err
    assert "back-exits-app" in broken_rules(out), out


def test_capacitor_options_are_checked():
    code, _, err = run_cli("check", "https://localhost/", "--capacitor", "{}")
    assert code == 2 and "--capacitor needs --profile capacitor" in err, err
    code, _, err = run_cli("check", "https://localhost/", "--profile", "capacitor", "--capacitor", '{"plugins": ["Nope"]}')
    assert code == 2 and "--capacitor: unknown plugin \"Nope\"" in err, err
    code, _, err = run_cli("check", "https://localhost/", "--profile", "capacitor", "--capacitor", "/nonexistent/options.json")
    assert code == 2 and "neither a JSON object nor a file that can be read" in err, err
    code, _, err = run_cli("open", "https://localhost/", "--profile", "capacitor", "--capacitor", '{"appId": 3}')
    assert code != 0 and "capacitor.appId must be a string" in err, err
    code, _, err = run_cli("serve", "--web-dir", "/nonexistent/dir")
    assert code != 0 and "--web-dir /nonexistent/dir: not a directory" in err, err
    code, _, err = run_cli("check", "https://localhost/", "--web-dir", str(APP_DIR))
    assert code == 2 and "--web-dir needs --profile capacitor" in err, err
    code, _, err = run_cli("check", "https://localhost/", "--profile", "capacitor", "--web-dir", "/nonexistent/dir")
    assert code == 2 and "--web-dir /nonexistent/dir: not a directory" in err, err
    code, _, err = run_cli("check", "https://localhost/", "--profile", "capacitor", "--platform", "windows")
    assert code == 2 and "--platform" in err, err
