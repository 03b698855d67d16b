"""The client's own tests. They run against the installed package (`make test-python-client`
installs it into a fresh venv first) and the daemon of $BRIDGED_BIN (the Makefile sets it to
.build/release/bridged). The browser tests use the demo PWA: --bridged-static defaults to
js-client/demo here."""
import pathlib

import pytest

import bridged

pytest_plugins = ["pytester"]  # test_shell.py runs pytest on test files of its own

REPO = pathlib.Path(__file__).resolve().parents[3]
DEMO = str(REPO / "js-client" / "demo")


def pytest_configure(config):
    if config.getoption("--bridged-static", default=None) is None:
        config.option.bridged_static = DEMO


class Page:
    """A page connection (the page side, by hand) for the tests of plain sessions."""

    def __init__(self, ws_url, **claim):
        self.connection = bridged.Connection(ws_url, timeout=10)
        self.hello = self.connection.say_hello("page", url="http://127.0.0.1/app/", **claim)

    def request(self, method, params=None):
        return self.connection.request(method, params)

    def close(self):
        self.connection.close()


@pytest.fixture
def page_of(bridged_daemon):
    pages = []

    def open_page(**claim):
        p = Page(bridged_daemon.ws_url, **claim)
        pages.append(p)
        return p

    yield open_page
    for p in pages:
        p.close()
