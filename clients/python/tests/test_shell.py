"""`pytest --bridged-shell`: ordinary pytest-playwright test files, which this project never
wrote its fixtures for, run in pytest processes of their own (pytester, in this venv: the
package with its `playwright` extra) against $BRIDGED_BIN, and pass in bridged's shell."""
import importlib.util
import inspect
import json
import os
import pathlib
import re
import select
import uuid
import xml.etree.ElementTree as ET

import pytest

from samples import DEMO, PWA_TESTS, REPO

HOTWIRE_APP = REPO / "Tests" / "integration" / "hotwire_app" / "server.py"


def doc_example(name):
    """The Python block of docs/PLAYWRIGHT.md that starts with `# NAME`."""
    doc = (REPO / "docs" / "PLAYWRIGHT.md").read_text()
    m = re.search(r"```python\n(# " + re.escape(name) + r"\b.*?)```", doc, re.S)
    assert m, f"docs/PLAYWRIGHT.md has its example {name}"
    return m.group(1)

# A failed test: its screen is kept, its session closed, and a page it opened outside every
# session closed too; the next test sees none of them.
FAILING_TESTS = '''
import bridged
import pytest
from playwright.sync_api import expect

failed = []


def test_fails_with_two_pages_and_a_stray(page, context, bridged_session):
    failed.append(bridged_session.id)
    page.goto("/app/astro.html")
    with context.expect_page() as opened:
        page.evaluate("location.href = '/app/classic.html'")
    expect(opened.value.locator("#webview")).to_have_text("W2")
    stray = context.new_page()
    stray.goto("data:text/html,<title>stray</title>")
    assert bridged_session.stack == "an expectation that fails"


def test_after_the_failure(page, context, bridged_controller):
    with pytest.raises(bridged.BridgeError) as gone:
        bridged_controller.call("session.get", session=failed[0])
    assert gone.value.code == "unknown-session"
    assert [p.url for p in context.pages if p.url != "about:blank"] == []


def test_a_test_may_close_its_session_itself(page, bridged_session):
    with page.expect_event("close"):
        bridged_session.close()
'''


def marked_chromium(mark):
    """Pids of the live Chromium processes whose environment has SHELL_TEST_MARK=`mark` (from /proc)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read().split(b"\0")
            with open(f"/proc/{name}/cmdline", "rb") as f:
                program = f.read().split(b"\0")[0]
            with open(f"/proc/{name}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"SHELL_TEST_MARK={mark}".encode() in environ and b"chrom" in os.path.basename(program) and state != "Z":
            found.append(int(name))
    return found


# Notes after each test which Chromium runs for the daemon of the run (its environment carries
# the mark the run was started with).
NOTE_CHROMIUM = "import json\nimport os\n\nimport pytest\n\n\n" + inspect.getsource(marked_chromium) + '''

@pytest.fixture(autouse=True)
def _note_chromium():
    yield
    with open(os.environ["SHELL_TEST_PIDS"], "a") as f:
        f.write(json.dumps(marked_chromium(os.environ["SHELL_TEST_MARK"])) + "\\n")
'''


def run(pytester, *args):
    """pytest ARGS in a process of its own, in pytester's directory; JUnit XML in junit.xml."""
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--junitxml=junit.xml", "-o", "junit_family=xunit1",
                                        *args, timeout=300)


def properties(pytester):
    """{test name: {property: value}} from the run's junit.xml."""
    tree = ET.parse(pytester.path / "junit.xml")
    return {case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
            for case in tree.iter("testcase")}


def wait_exited(pids, timeout=10):
    """Waits until each pid has exited (a pidfd turns readable when its process ends)."""
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            select.select([fd], [], [], timeout)
        finally:
            os.close(fd)


def test_a_pytest_playwright_file_runs_in_the_shell_and_leaves_no_chromium(pytester, monkeypatch):
    mark = uuid.uuid4().hex
    monkeypatch.setenv("SHELL_TEST_MARK", mark)
    monkeypatch.setenv("SHELL_TEST_PIDS", str(pytester.path / "chromium.pids"))
    pytester.makeconftest(NOTE_CHROMIUM)
    pytester.makepyfile(test_pwa=PWA_TESTS, test_failing=FAILING_TESTS, test_demo=doc_example("test_demo.py"))
    result = run(pytester, "--bridged-shell", "--bridged-static", DEMO, "-v", "test_pwa.py", "test_failing.py", "test_demo.py")
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(["*test_pwa.py::test_pwa_link_classic_navigation_back?chromium? PASSED*",
                                 "*test_failing.py::test_fails_with_two_pages_and_a_stray?chromium? FAILED*",
                                 "*test_demo.py::test_deals_then_a_classic_page_then_back?chromium? PASSED*"])

    props = properties(pytester)
    first, second = (props[f"test_{n}[chromium]"]["session"] for n in ("pwa_link_classic_navigation_back",
                                                                      "the_next_test_starts_in_a_new_session"))
    assert first.startswith("s-") and second.startswith("s-") and first != second
    # The failed test's screen, as the user saw it (W2 on top): a JPEG in its output folder.
    screenshot = props["test_fails_with_two_pages_and_a_stray[chromium]"]["bridged_screenshot"]
    assert pathlib.Path(screenshot).parent.parent == pytester.path / "test-results"
    assert pathlib.Path(screenshot).name == "test-failed-1.jpg"
    assert "test-fails-with-two-pages-and-a-stray" in pathlib.Path(screenshot).parent.name
    jpeg = pathlib.Path(screenshot).read_bytes()
    assert jpeg[:3] == b"\xff\xd8\xff" and jpeg[-2:] == b"\xff\xd9"
    assert len(list((pytester.path / "test-results").rglob("*.jpg"))) == 1  # passed tests keep none

    # Chromium ran for the daemon during every test, and none of it outlives the run.
    noted = [json.loads(line) for line in (pytester.path / "chromium.pids").read_text().splitlines()]
    assert len(noted) == 6 and all(noted), noted
    wait_exited({pid for pids in noted for pid in pids})
    assert marked_chromium(mark) == []


def test_base_url_option_and_without_pytest_playwright(pytester, tmp_path):
    """--base-url is the base of relative urls; with pytest-playwright switched off
    (-p no:playwright) the shell brings its own `playwright` fixture and `--base-url`."""
    site = tmp_path / "site" / "sub"
    site.mkdir(parents=True)
    (site / "hello.html").write_text("<!doctype html><title>hello</title><h1 id=t>hello</h1>")
    import http.server
    import threading

    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path / "site"))  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/sub/"
    pytester.makepyfile(test_site=f'''
        from playwright.sync_api import expect

        def test_relative_to_the_given_base_url(page, base_url, bridged_session):
            assert base_url == {base!r}
            page.goto("hello.html")
            expect(page.locator("#t")).to_have_text("hello")
            expect(page).to_have_url("hello.html")
            assert page.url == {base + "hello.html"!r}
            bridged_session.wait_event("page.connected", webview="W1", timeout=15)
            assert bridged_session.stack == "W1(*C)"
        ''')
    try:
        # With pytest-playwright, and its --screenshot on: a passed test's screen is kept too.
        result = run(pytester, "--bridged-shell", "--base-url", base, "--screenshot", "on")
        result.assert_outcomes(passed=1)
        kept = list((pytester.path / "test-results").rglob("*.jpg"))
        assert [p.name for p in kept] == ["test-finished-1.jpg"] and kept[0].read_bytes()[:3] == b"\xff\xd8\xff"
        result = run(pytester, "--bridged-shell", "--base-url", base, "-p", "no:playwright")
        result.assert_outcomes(passed=1)
    finally:
        server.shutdown()


def _hotwire_app():
    spec = importlib.util.spec_from_file_location("hotwire_app_server", HOTWIRE_APP)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not os.path.exists(module.TURBO):
        pytest.fail(f"no Turbo at {module.TURBO}: run scripts/fetch-turbo.sh (make test-python-client does)")
    return module


@pytest.mark.parametrize("platform", ["ios", "android"])
def test_a_turbo_apps_suite_in_the_hotwire_native_shell(pytester, platform):
    """docs/PLAYWRIGHT.md's worked example, as the doc runs it."""
    app = _hotwire_app()
    server, base = app.start()
    try:
        if platform == "ios":  # the document from a file, on iOS; its URL (the daemon fetches it), on Android
            (pytester.path / "path-configuration.json").write_text(json.dumps(app.PATH_CONFIGURATION))
            configuration = "path-configuration.json"
        else:
            configuration = base + "/path-configuration.json"
        pytester.makepyfile(test_turbo_app=doc_example("test_turbo_app.py"))
        result = run(pytester, "--bridged-shell", "--base-url", base, "--bridged-profile", "hotwire-native",
                     "--bridged-platform", platform, "--bridged-path-configuration", configuration,
                     "--bridged-bridge-components", "form", "test_turbo_app.py")
        result.assert_outcomes(passed=1)
    finally:
        server.shutdown()


def test_session_params_from_the_options(pytester):
    """What the shell's sessions are created with (a Capacitor app's, here), without a daemon."""
    capacitor = {"appId": "com.example.app", "appName": "Example", "version": "1.2.0", "build": "7",
                 "plugins": ["App", "Preferences"], "allowNavigation": ["*.example.com"]}
    (pytester.path / "capacitor.json").write_text(json.dumps(capacitor))
    pytester.makepyfile(test_params=f'''
        def test_params(bridged_session_params):
            assert bridged_session_params == {{"profile": "capacitor", "platform": "ios", "capacitor": {capacitor!r}}}

        def test_a_test_may_change_its_copy(bridged_session_params):
            bridged_session_params["platform"] = "android"

        def test_params_again(bridged_session_params):
            assert bridged_session_params["platform"] == "ios"
        ''', test_android_only='''
        def test_the_conftest_chose_android(bridged_session_params):
            assert bridged_session_params["platform"] == "android" and bridged_session_params["profile"] == "capacitor"
        ''')
    pytester.makeconftest(doc_example("conftest.py"))  # PLAYWRIGHT.md's override, per module
    for value in (json.dumps(capacitor), "capacitor.json"):
        result = run(pytester, "--bridged-shell", "--bridged-profile", "capacitor", "--bridged-platform", "ios",
                     "--bridged-capacitor", value, "test_params.py", "test_android_only.py")
        result.assert_outcomes(passed=4)

    # What the test's session.create sends (the daemon may refuse the profile: only the params count).
    pytester.makepyfile(test_capacitor_session="def test_a_session(bridged_session):\n    pass\n")
    pytester.makeconftest('''
        import json
        import pytest

        @pytest.fixture
        def bridged_controller(bridged_controller):
            request = bridged_controller._request
            def noting(method, params, timeout):
                if method == "session.create":
                    with open("session-create.json", "w") as f:
                        json.dump(params, f)
                return request(method, params, timeout)
            bridged_controller._request = noting
            return bridged_controller
        ''')
    result = run(pytester, "--bridged-shell", "--bridged-profile", "capacitor", "--bridged-platform", "ios",
                 "--bridged-capacitor", "capacitor.json", "test_capacitor_session.py")
    assert json.loads((pytester.path / "session-create.json").read_text()) == {
        "url": "about:blank", "browser": True, "profile": "capacitor", "platform": "ios", "capacitor": capacitor}


@pytest.mark.parametrize("args, message", [
    (["--bridged-capacitor", "{not json"], "--bridged-capacitor: not a JSON object*"),
    (["--bridged-capacitor", "list.json"], "--bridged-capacitor: a JSON object is needed*"),
    (["--bridged-path-configuration", "missing.json"], "--bridged-path-configuration missing.json: No such file*"),
    (["--bridged-shell", "--browser", "firefox"], "--bridged-shell runs the tests in the daemon's Chromium: --browser firefox cannot apply"),
])
def test_options_that_cannot_apply(pytester, args, message):
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    (pytester.path / "list.json").write_text("[1]")
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])


def test_without_the_flag_pytest_playwright_keeps_its_fixtures(pytester):
    pytester.makepyfile(test_nothing="def test_nothing(bridged_session):\n    pass\n")
    where = {}
    for flag in ([], ["--bridged-shell"]):
        result = run(pytester, "--fixtures", "-v", *flag)
        assert result.ret == 0
        where[bool(flag)] = {name: next(line for line in result.outlines if line.startswith(f"{name} ") and " -- " in line)
                             for name in ("browser", "context", "page", "base_url", "bridged_session")}
    for name in ("browser", "context", "page"):
        assert "pytest_playwright" in where[False][name] and "bridged/_shell.py" in where[True][name], (name, where)
    assert "bridged/_shell.py" not in where[False]["base_url"] and "bridged/_shell.py" in where[True]["base_url"]
    assert "bridged/pytest_plugin.py" in where[False]["bridged_session"]
    # Without the flag, bridged_session says what it needs.
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*the fixture bridged_session needs pytest --bridged-shell*"])

