"""The daemon's caps on what a page may make a session hold, and the controller-origin rule,
against the real binary (docs/PROTOCOL.md section 7 and section 3)."""
import bridged


def connect(d, **kwargs) -> bridged.Connection:
    return bridged.Connection(d.ws_url, timeout=15, **kwargs)


def call(c: bridged.Connection, method: str, params: dict) -> dict:
    """The whole reply frame: a result or an error."""
    return c.call_frame(method, params)


def test_a_url_over_the_cap_is_refused_and_changes_nothing(daemon_factory):
    d = daemon_factory("--max-url-bytes", "100", "--max-session-bytes", "2000")
    page = connect(d)
    hello = call(page, "hello", {"protocol": 1, "role": "page", "url": "http://h/app/"})["result"]
    over = "http://h/app/#" + "a" * 100
    assert call(page, "pwa-navigate", {"url": over})["error"]["code"] == "invalid-params"
    # The session grows until --max-session-bytes, then limit-exceeded.
    codes = []
    for i in range(3, 40):
        r = call(page, "pwa-navigate", {"url": "http://h/app/#" + "b" * 80})
        codes.append("ok" if "result" in r else r["error"]["code"])
        if "error" in r:
            break
        call(page, "pwa-rendered", {})
    assert codes[-1] == "limit-exceeded" and codes.count("ok") >= 3
    ctl = connect(d)
    call(ctl, "hello", {"protocol": 1, "role": "controller"})
    got = call(ctl, "session.get", {"session": hello["session"]})["result"]
    assert len(got["stack"]) == 1 + codes.count("ok")  # each pwa-navigate adds a placeholder
    for ws in (page, ctl):
        ws.close()


def test_a_controller_from_a_browser_page_needs_the_token_or_an_allowed_origin(daemon_factory):
    d = daemon_factory()
    browser = connect(d, origin="http://localhost:5173")
    r = call(browser, "hello", {"protocol": 1, "role": "controller"})
    assert r["error"]["code"] == "not-allowed" and "--allow-controller-origin" in r["error"]["message"]
    tool = connect(d)  # no Origin: a test harness
    assert "result" in call(tool, "hello", {"protocol": 1, "role": "controller"})
    for ws in (browser, tool):
        ws.close()

    allowed = daemon_factory("--allow-controller-origin", "http://localhost:5173")
    browser = connect(allowed, origin="http://localhost:5173")
    assert "result" in call(browser, "hello", {"protocol": 1, "role": "controller"})
    browser.close()
