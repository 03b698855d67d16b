"""Test files the shell's tests run in pytest processes of their own (test_shell.py, test_packaging.py)."""
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[3]
DEMO = str(REPO / "js-client" / "demo")

# The bar: a test file as a team writes it for pytest-playwright, on the demo PWA.
PWA_TESTS = '''
import bridged
import pytest
from playwright.sync_api import Page, expect

first_session = []


def test_pwa_link_classic_navigation_back(page: Page, base_url, bridged_session, bridged_daemon, record_property):
    record_property("session", bridged_session.id)
    first_session.append(bridged_session.id)
    assert base_url == bridged_daemon.base_url                     # no --base-url: the daemon's
    page.goto("/app/astro.html")                      # relative: against base_url
    expect(page.locator("body")).to_have_attribute("data-in-app", "true")
    assert bridged_session.stack == "W1(*C)"

    page.click("#astro-deals")                        # the PWA's own link
    bridged_session.wait_rendered()
    assert bridged_session.stack == "P1 W1(*P)"
    expect(page).to_have_url("/app/astro.html?page=deals")

    with page.context.expect_page() as opened:         # a classic navigation: a new web view
        page.evaluate("location.href = '/app/classic.html'")
    w2 = opened.value
    w2.wait_for_url("/app/classic.html")
    expect(w2.locator("#webview")).to_have_text("W2")
    assert bridged_session.stack == "P1 W1(*P) W2(*C)"
    assert bridged_session.page == w2 and bridged_session.page_of("W1") == page
    assert page.url == base_url + "/app/astro.html?page=deals"
    assert bridged_session.wait_event("webview.open", webview="W2")["url"] == base_url + "/app/classic.html"

    with w2.expect_event("close"):                    # the session's back closes its page
        assert bridged_session.back()["removed"] == ["W2"]
    assert bridged_session.stack == "P1 W1(*P)"
    assert bridged_session.page == page


def test_the_next_test_starts_in_a_new_session(page, context, bridged_session, bridged_controller, record_property):
    record_property("session", bridged_session.id)
    assert bridged_session.id != first_session[0]
    with pytest.raises(bridged.BridgeError) as gone:                 # the first test's session is closed
        bridged_controller.call("session.get", session=first_session[0])
    assert gone.value.code == "unknown-session"
    assert page.url == "about:blank" and page.context is context
    assert bridged_session.stack == "W1(*C)~"
    assert [p.url for p in context.pages if p.url != "about:blank"] == []
'''
