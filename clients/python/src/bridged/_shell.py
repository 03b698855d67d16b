"""bridged as the native shell of a pytest-playwright suite: ``pytest --bridged-shell``.

This module is registered as a plugin by ``bridged.pytest_plugin`` in ``pytest_configure``,
only when the flag is given: registered after every plugin of the entry points, its fixtures
``browser``, ``context``, ``page`` and ``base_url`` shadow pytest-playwright's (and
pytest-base-url's); a conftest.py still overrides them as usual. Playwright is imported here
only, so the library and its plugin work without it.

- ``browser`` (session): Playwright attached to the daemon's Chromium (``bridged serve
  --devtools``, ``GET /api/devtools``) with ``connect_over_cdp``; disconnected at the end (the
  daemon then stops its Chromium).
- ``bridged_session`` (function): a browser session of its own for each test
  (``session.create`` with ``--bridged-start-url`` and ``bridged_session_params``), a
  ``ShellSession``. After the test: its screen kept when the test failed (or with
  ``--screenshot on``), the session closed and its pages' ``close`` awaited, and pages the test
  opened outside every session (``context.new_page()``) closed.
- ``page`` (function): the session's first web view; ``context``: its browser context
  (Playwright files every page of bridged's Chromium under the connection's default context).
- ``base_url`` (session): ``--base-url`` (or the ini's ``base_url``), else the daemon's own
  ``http://127.0.0.1:PORT``. That context was not made by Playwright with a ``base_url``, so the
  shell gives it one: its pages resolve relative urls of ``goto`` against it, and ``expect(page)
  .to_have_url``, ``wait_for_url`` and routes read it.
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
import time
import urllib.parse
from typing import Any, Dict, Generator, Iterator, List, Optional, Set, Tuple

import pytest
from playwright.sync_api import Browser, BrowserContext, Error as PlaywrightError, Page, Playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import sync_playwright

from ._controller import Controller
from ._daemon import Daemon
from ._errors import BridgeError
from ._session import Session

#: item.stash: the test's reports by phase ("setup", "call"), for the teardown of its session.
_REPORTS = pytest.StashKey[Dict[str, pytest.TestReport]]()
#: How long the shell waits for Playwright to see a web view's page, or a closed session's pages go.
PAGE_TIMEOUT = 30.0


def register(config: pytest.Config) -> None:
    """Registers the shell's fixtures (``--bridged-shell``)."""
    browsers = config.getoption("--browser", default=None) or []  # pytest-playwright's --browser
    others = sorted(set(browsers) - {"chromium"})
    if others:
        raise pytest.UsageError(f"--bridged-shell runs the tests in the daemon's Chromium: --browser {' '.join(others)} cannot apply")
    if not config.pluginmanager.hasplugin("playwright"):  # pytest-playwright, whose entry point is `playwright`
        config.pluginmanager.register(_PlaywrightFixture(), "bridged-shell-playwright")
    config.pluginmanager.register(sys.modules[__name__], "bridged-shell")


class _PlaywrightFixture:
    """``playwright`` when pytest-playwright is not installed (or not loaded)."""

    @pytest.fixture(scope="session")
    @staticmethod
    def playwright() -> Iterator[Playwright]:
        with sync_playwright() as p:
            yield p


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    item.stash.setdefault(_REPORTS, {})[report.when] = report


@pytest.fixture(scope="session")
def base_url(pytestconfig: pytest.Config, bridged_daemon: Daemon) -> str:
    """``--base-url`` (or the ini's ``base_url``) when given, else the daemon's own address."""
    given = pytestconfig.getoption("--base-url", default=None)
    if not given:
        try:
            given = pytestconfig.getini("base_url")
        except ValueError:  # no plugin declares the ini value
            given = None
    return str(given or bridged_daemon.base_url)


@pytest.fixture(scope="session")
def browser(playwright: Playwright, bridged_daemon: Daemon, base_url: str,
            pytestconfig: pytest.Config) -> Iterator[Browser]:
    """Playwright attached to the daemon's Chromium (``connect_over_cdp``)."""
    slow_mo = pytestconfig.getoption("--slowmo", default=0) or None  # pytest-playwright's --slowmo
    browser = playwright.chromium.connect_over_cdp(bridged_daemon.devtools_url(), slow_mo=slow_mo)
    _resolve_against(browser.contexts[0], base_url)
    try:
        yield browser
    finally:
        browser.close()  # disconnects; the daemon stops its Chromium when it stops


@pytest.fixture(scope="session")
def _bridged_pages(browser: Browser) -> "Pages":
    return Pages(browser)


@pytest.fixture
def bridged_session(request: pytest.FixtureRequest, _bridged_pages: "Pages", bridged_controller: Controller,
                    bridged_session_params: Dict[str, Any], base_url: str) -> Iterator["ShellSession"]:
    """The test's own browser session (a ``ShellSession``), closed after the test."""
    pages = _bridged_pages
    before = set(pages.context.pages)
    folder = _output_folder(request)
    start = urllib.parse.urljoin(base_url, request.config.getoption("--bridged-start-url"))
    created = bridged_controller.create_session(start, browser=True, **bridged_session_params)
    session = ShellSession(bridged_controller, created.created, pages)
    yield session
    failed = _failed(request.node)
    if failed or request.config.getoption("--screenshot", default="off") == "on":
        _keep_screen(session, request.node, folder, failed)
    # The session's pages go with it: wait until Playwright has seen them close, so that the
    # next test starts without them (a session the test closed itself has none left).
    with contextlib.ExitStack() as closing:
        for page in pages.of_session(session):
            closing.enter_context(page.expect_event("close", timeout=PAGE_TIMEOUT * 1000))
        session.close()
    pages.close_strays(before)


@pytest.fixture
def page(bridged_session: "ShellSession") -> Page:
    """The Playwright page of the test session's first web view."""
    return bridged_session.page_of(str(bridged_session.created.get("webview", "W1")))


@pytest.fixture
def context(page: Page) -> BrowserContext:
    """The browser context of ``page`` (Playwright's default context of the connection)."""
    return page.context


class ShellSession(Session):
    """The ``bridged.Session`` of a test's page under ``--bridged-shell``, plus its Playwright pages.

    ``page`` is the page of the top web view now (after a classic navigation opened W2, W2's),
    ``page_of("W1")`` the page of a given web view, ``pages`` every web view's page.
    """

    def __init__(self, controller: Controller, created: Dict[str, Any], pages: "Pages") -> None:
        super().__init__(controller, created)
        self._pages = pages

    @property
    def page(self) -> Page:
        """The Playwright page of the top web view of the stack now."""
        state = self.get()
        return self._page_of(state, self._top_webview(state["stack"]))

    def page_of(self, webview: str) -> Page:
        """The Playwright page of web view ``webview`` (``"W2"``); waits until Playwright knows it."""
        return self._page_of(self.get(), webview)

    @property
    def pages(self) -> Dict[str, Page]:
        """``{web view: page}`` of every web view of the session that has a tab."""
        state = self.get()
        return {webview: self._page_of(state, webview) for webview in (state.get("targetIds") or {})}

    def _page_of(self, state: Dict[str, Any], webview: str) -> Page:
        target = (state.get("targetIds") or {}).get(webview)
        if not target:
            raise BridgeError("unknown-webview", f"session {self.id}: web view {webview} has no tab "
                              f"(targetIds: {state.get('targetIds')})")
        return self._pages.find(str(target), f"web view {webview} of session {self.id}")


class Pages:
    """The pages of the daemon's Chromium as Playwright sees them, by Chromium's target id."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.context = browser.contexts[0]
        self._info: Dict[Page, Tuple[str, str]] = {}
        self._page_events = 0
        self.context.on("page", self._count)

    def _count(self, page: Page) -> None:
        self._page_events += 1

    def info(self, page: Page) -> Optional[Tuple[str, str]]:
        """``(targetId, browserContextId)`` of a page (a DevTools session on it asks Chromium);
        None when it closed meanwhile."""
        known = self._info.get(page)
        if known is not None:
            return known
        try:
            cdp = self.context.new_cdp_session(page)
            try:
                target = cdp.send("Target.getTargetInfo")["targetInfo"]
            finally:
                with contextlib.suppress(PlaywrightError):
                    cdp.detach()
        except PlaywrightError:
            if page.is_closed():
                return None
            raise
        self._info[page] = (str(target["targetId"]), str(target.get("browserContextId", "")))
        return self._info[page]

    def find(self, target_id: str, what: str, timeout: float = PAGE_TIMEOUT) -> Page:
        """The page of Chromium's target ``target_id``, once Playwright has it."""
        deadline = time.monotonic() + timeout
        while True:
            for page in [p for p in self._info if p.is_closed()]:
                del self._info[page]
            seen = self._page_events
            for page in self.context.pages:
                if not page.is_closed():
                    info = self.info(page)
                    if info is not None and info[0] == target_id:
                        return page
            if self._page_events != seen:
                continue  # pages came while these were asked: look at them too
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"Playwright has no page for {what} (Chromium's target {target_id}) after {timeout} s")
            # Until the context's next page. Playwright dispatches events inside its own calls
            # only, so one that came after the look above is seen by this wait; the bound is a
            # backstop for one dispatched as the wait began.
            with contextlib.suppress(PlaywrightTimeoutError):
                self.context.wait_for_event("page", timeout=min(remaining, 1.0) * 1000)

    def of_session(self, session: Session) -> List[Page]:
        """The open pages Playwright knows of the session's web views (none once it is closed)."""
        try:
            state = session.get()
        except BridgeError as e:
            if e.code == "unknown-session":
                return []
            raise
        targets = set((state.get("targetIds") or {}).values())
        return [p for p in self.context.pages if not p.is_closed() and (self.info(p) or ("",))[0] in targets]

    def close_strays(self, before: Set[Page]) -> None:
        """Closes pages opened since ``before`` in Chromium's default context, outside every
        session (``context.new_page()``): bridged's own tabs, in contexts of their own, stay."""
        new = [(p, self.info(p)) for p in self.context.pages if p not in before and not p.is_closed()]
        if not new:
            return
        cdp = self.browser.new_browser_cdp_session()  # after the pages' contexts were read: lists them all
        try:
            bridged = set(cdp.send("Target.getBrowserContexts")["browserContextIds"])
        finally:
            cdp.detach()
        for page, info in new:
            if info is not None and info[1] not in bridged:
                with contextlib.suppress(PlaywrightError):
                    page.close()


def _resolve_against(context: BrowserContext, base_url: str) -> None:
    """Gives a context Playwright did not make the ``base_url`` it would have been made with.

    Its client-side options carry it (``expect(page).to_have_url``, ``wait_for_url``, routes);
    ``goto`` is resolved by Playwright's driver from the options the context was made with, so
    each page's main frame resolves a relative url before it asks.
    """
    options = getattr(getattr(context, "_impl_obj", None), "_options", None)
    if isinstance(options, dict):
        options["baseURL"] = base_url

    def resolving(page: Page) -> None:
        frame = getattr(page.main_frame, "_impl_obj", None)
        if frame is None or getattr(frame, "_bridged_base_url", None) is not None:
            return
        goto = frame.goto

        def resolved_goto(*args: Any, **kwargs: Any) -> Any:
            if "url" in kwargs:
                kwargs["url"] = urllib.parse.urljoin(base_url, kwargs["url"])
            elif args:
                args = (urllib.parse.urljoin(base_url, args[0]),) + args[1:]
            return goto(*args, **kwargs)

        frame.goto = resolved_goto
        frame._bridged_base_url = base_url

    for page in context.pages:
        resolving(page)
    context.on("page", resolving)


def _failed(item: pytest.Item) -> bool:
    """Did the test fail (its call, or its setup after the session was made)?"""
    reports = item.stash.get(_REPORTS, {})
    if "call" in reports:
        return bool(reports["call"].failed)
    setup = reports.get("setup")
    return setup is None or bool(setup.failed)


def _output_folder(request: pytest.FixtureRequest) -> str:
    """The test's folder of artifacts: pytest-playwright's ``output_path``, else the same form
    (``--output``, default ``test-results``, then the test's id made a file name)."""
    with contextlib.suppress(pytest.FixtureLookupError):
        return str(request.getfixturevalue("output_path"))
    root = os.path.abspath(request.config.getoption("--output", default="test-results"))
    return os.path.join(root, re.sub(r"[^a-z0-9]+", "-", request.node.nodeid.lower()).strip("-"))


def _keep_screen(session: ShellSession, item: pytest.Item, folder: str, failed: bool) -> None:
    """The session's screen as the user sees it now (``session.screenshot``, JPEG) into the
    test's folder: ``test-failed-1.jpg`` (or ``test-finished-1.jpg`` with ``--screenshot on``)."""
    try:
        jpeg = session.screenshot()
    except (BridgeError, TimeoutError, ConnectionError) as e:
        item.add_report_section("teardown", "bridged", f"no screenshot of session {session.id}: {e}")
        return
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"test-{'failed' if failed else 'finished'}-1.jpg")
    with open(path, "wb") as f:
        f.write(jpeg)
    item.user_properties.append(("bridged_screenshot", path))
