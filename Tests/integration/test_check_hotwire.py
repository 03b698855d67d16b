"""`bridged check --profile hotwire-native` (docs/CHECK.md, "The hotwire-native profile") against
a Hotwire-style app with the real Turbo 7.1.0 (hotwire_check_app.py): the clean app passes by
exploring on both platforms, each rule of the profile fires with its evidence, a 404 start page
exits 2, and the profile's options are checked."""
import json
import os
import xml.etree.ElementTree as ET

import pytest

import hotwire_check_app
from test_check import broken_rules, check, needs_chromium, run_cli

PLATFORMS = ["ios", "android"]
HOTWIRE_RULES = ["visit-not-rendered", "back-wrong-page", "visit-failed", "cold-boot-link", "bridge-message-ignored", "page-error"]

needs_turbo = pytest.mark.skipif(not os.path.exists(hotwire_check_app.TURBO),
                                 reason="no Turbo: run scripts/fetch-turbo.sh (install-deps --test does)")


@pytest.fixture(scope="module")
def app():
    server, base = hotwire_check_app.start()
    yield base
    server.shutdown()
    server.server_close()


def hotwire(platform, *args):
    return ["--profile", "hotwire-native", "--platform", platform, *args]


def findings(out):
    """BROKEN lines and their evidence, by rule."""
    by_rule, current = {}, None
    for line in out.splitlines():
        if line.startswith("BROKEN "):
            current = line.split()[1]
            by_rule.setdefault(current, []).append([line])
        elif line.startswith("    ") and current:
            by_rule[current][-1].append(line.strip())
        else:
            current = None
    return by_rule


@needs_chromium
@needs_turbo
@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_clean_hotwire_app_passes_exploring_with_native_back(app, platform, tmp_path):
    config = tmp_path / "path-configuration.json"
    config.write_text(json.dumps(hotwire_check_app.PATH_CONFIGURATION))
    # iOS gets the path configuration as a file, Android as the URL the app serves.
    source = str(config) if platform == "ios" else app + "/hw/path-configuration.json"
    junit = tmp_path / "check.xml"
    code, out, err = check(app + "/hw/good/", *hotwire(platform, "--path-configuration", source, "--bridge-components", "form"),
                           "--junit", str(junit))
    assert code == 0, out + err
    assert out.splitlines()[-1].startswith("app-aware: 8 rules kept"), out
    states = [l.split()[1] for l in out.splitlines() if l.startswith("  ") and l.strip()[0].isdigit()]
    # The modal and the native screen are states of their own; back is native back (a pop).
    assert sorted(states) == sorted(["/hw/good/", "/hw/good/one", "/hw/good/two", "/hw/good/items/new",
                                     "/hw/good/numbers", "/hw/good/bridge"]), out
    assert "fresh session" not in out, "native back brought the start page back each time"
    rows = [l.split() for l in out.splitlines()]
    assert any(r[2:3] == ["back"] and r[-1] == "ok" for r in rows), out
    names = {t.get("name").split(":")[0] for t in ET.parse(junit).getroot().iter("testcase") if t.get("classname") == "rules"}
    assert names == set(HOTWIRE_RULES) | {"load-failed", "nothing-explored"}
    assert "push-without-navigate" not in out and "back-stuck" not in out


@needs_chromium
@needs_turbo
@pytest.mark.parametrize("platform", PLATFORMS)
def test_each_hotwire_rule_fires_with_its_evidence(app, platform, tmp_path):
    steps = tmp_path / "bad.yaml"
    steps.write_text("\n".join([
        '- click: "#to-missing"', "- back",
        '- click: "#to-plain"', "- back",
        '- click: "#to-stale-bridge"', "- back",
        '- click: "#to-throws"', "- back",
        '- click: "#to-trap"', "- back",
        '- click: "#to-stuck"',
    ]) + "\n")
    junit = tmp_path / "bad.xml"
    code, out, err = check(app + "/hw/bad/", *hotwire(platform, "--path-configuration", app + "/hw/path-configuration.json",
                                                      "--bridge-components", "form"),
                           "--steps", str(steps), "--timeout-s", "4", "--junit", str(junit))
    assert code == 1, out + err
    assert broken_rules(out) == sorted(HOTWIRE_RULES), out
    f = findings(out)
    base = app
    # Each finding at its step, with the observations behind it.
    failed = f["visit-failed"][0]
    assert "(step 1, W1)" in failed[0] and "/hw/bad/missing in W1 failed: HTTP 404" in failed[0], failed
    assert any(f"visitRequestFailed {{location: {base}/hw/bad/missing, statusCode: 404}}" in e for e in failed), failed
    cold = f["cold-boot-link"][0]
    assert "(step 3, W1)" in cold[0] and "/hw/bad/plain as a new document" in cold[0], cold
    assert any('a tap on a#to-plain[href="/hw/bad/plain"][data-turbo="false"]' in e for e in cold), cold
    bridge = f["bridge-message-ignored"][0]
    assert "(step 5, W1)" in bridge[0] and "form component's connect message" in bridge[0], bridge
    assert any(f"data.metadata.url: {base}/hw/bad/" in e for e in bridge[1:]), bridge
    assert any(f"is not the web view's url {base}/hw/bad/stale-bridge" in e for e in bridge), bridge
    error = f["page-error"][0]
    assert "(step 7, W1)" in error[0] and "boom on the throws page" in error[0], error
    if platform == "ios":
        assert any(e.endswith("(native got it)") and "boom on the throws page" in e for e in error), error
    back = f["back-wrong-page"][0]
    assert "(step 10, W1)" in back[0] and "shows /hw/bad/elsewhere instead of /hw/bad/" in back[0], back
    assert any("native back: pop" in e for e in back) and any("restore visit started" in e for e in back), back
    stuck = f["visit-not-rendered"][0]
    assert "(step 11, W1)" in stuck[0] and "/hw/bad/stuck in W1 never rendered" in stuck[0], stuck
    assert any(e.startswith("no visitRendered for") for e in stuck) and any("visitRequestCompleted" in e for e in stuck), stuck
    assert "step 11 failed" in out and "has not rendered (no visitRendered)" in out
    for rule in HOTWIRE_RULES:
        assert len(f[rule]) == 1, (rule, f[rule])
        assert f"to fix {rule}:" in out
    failures = sorted(x.get("type") for x in ET.parse(junit).getroot().iter("failure") if x.get("type") in HOTWIRE_RULES)
    assert failures == sorted(HOTWIRE_RULES)


@needs_chromium
@needs_turbo
def test_a_404_start_page_exits_2(app):
    code, out, err = check(app + "/hw/bad/missing", *hotwire("ios"))
    assert code == 2, out + err
    assert "answered HTTP 404 in the browser" in err


def test_the_profile_options_are_checked(tmp_path):
    _, out, _ = run_cli("check", "--help")
    for flag in ("--platform", "--path-configuration", "--bridge-components"):
        assert flag in out, flag
    code, _, err = run_cli("check", "--platform", "android", "http://127.0.0.1/")
    assert code == 2 and "--platform needs" in err and "hotwire-native" in err, err
    code, _, err = run_cli("check", "--profile", "hotwire-native", "--platform", "web", "http://127.0.0.1/")
    assert code == 2 and 'platform must be "ios" or "android"' in err, err
    missing = tmp_path / "nope.json"
    code, _, err = run_cli("check", "--profile", "hotwire-native", "--path-configuration", str(missing), "http://127.0.0.1/")
    assert code == 2 and "cannot be read" in err, err
    code, _, err = run_cli("check", "--profile", "other", "http://127.0.0.1/")
    assert code == 2 and "--profile must be one of astro, hotwire-native" in err, err
