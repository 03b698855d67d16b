"""The pytest plugin of bridged (entry point ``pytest11``: loaded once the package is installed).

Fixtures:

- ``bridged_daemon`` (session scope): one ``bridged.Daemon`` for the whole test run, stopped at
  its end. Options: ``--bridged-binary PATH`` (else ``$BRIDGED_BIN``, else ``bridged`` on PATH),
  ``--bridged-static DIR`` (``--static``), ``--bridged-config FILE`` (``--config``),
  ``--bridged-args=ARGS`` (more flags of ``bridged serve``).
- ``bridged_controller`` (function scope): a ``bridged.Controller`` on that daemon, closed after
  the test together with the sessions it created.
- ``bridged_session_params`` (function scope): the ``session.create`` params of the shell's
  sessions, from ``--bridged-profile``, ``--bridged-platform``, ``--bridged-path-configuration``,
  ``--bridged-bridge-components`` and ``--bridged-capacitor`` (override it in a conftest.py to
  choose them per test).

``pytest --bridged-shell`` (bridged's shell for pytest-playwright, docs/PLAYWRIGHT.md): the
daemon starts with ``--devtools``, and the fixtures ``browser``, ``context``, ``page`` and
``base_url`` come from bridged (module ``bridged._shell``): every test gets a browser session
of its own, ``page`` is its first web view attached through Playwright's ``connect_over_cdp``,
and ``bridged_session`` is that session (``bridged._shell.ShellSession``). Without the flag the
plugin leaves pytest-playwright's fixtures alone.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import sys
from typing import Any, Dict, Iterator

import pytest

from ._controller import Controller
from ._daemon import Daemon

#: config.stash: the session.create params the options ask for (parsed once, in pytest_configure).
SESSION_PARAMS_KEY = pytest.StashKey[Dict[str, Any]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bridged", "bridged daemon (fixture bridged_daemon) and its shell for pytest-playwright")
    group.addoption("--bridged-binary", metavar="PATH", default=None,
                    help="the bridged executable (default: $BRIDGED_BIN, else bridged on PATH)")
    group.addoption("--bridged-static", metavar="DIR", default=None,
                    help="served under /app/ by the daemon (its --static)")
    group.addoption("--bridged-config", metavar="FILE", default=None,
                    help="the daemon's routing configuration (its --config)")
    group.addoption("--bridged-args", metavar="ARGS", default=None,
                    help="more flags of `bridged serve`, one string split as a shell does "
                         "(write it with '=': --bridged-args='--allow-origin http://app.test')")
    group.addoption("--bridged-shell", action="store_true", default=False,
                    help="pytest-playwright's browser, context, page and base_url come from bridged: "
                         "the daemon starts with --devtools and each test gets a browser session of its own")
    group.addoption("--bridged-profile", metavar="NAME", default=None,
                    help="the profile of the shell's sessions: astro (the daemon's default), hotwire-native, "
                         "capacitor (the daemon refuses one it does not know)")
    group.addoption("--bridged-platform", metavar="NAME", default=None, choices=["ios", "android"],
                    help="the platform the shell's sessions play: ios or android")
    group.addoption("--bridged-path-configuration", metavar="FILE|URL", default=None,
                    help="hotwire-native: the path configuration, a JSON file (pathConfiguration) or an "
                         "http(s) URL the daemon fetches (pathConfigurationUrl)")
    group.addoption("--bridged-bridge-components", metavar="NAMES", default=None,
                    help="hotwire-native: the bridge components native registers, separated by spaces or commas")
    group.addoption("--bridged-capacitor", metavar="JSON|FILE", default=None,
                    help="capacitor: the session's `capacitor` param (appId, appName, version, build, "
                         "launchUrl, plugins, allowNavigation), a JSON object or a file holding one")
    group.addoption("--bridged-start-url", metavar="URL", default="about:blank",
                    help="what each shell session's first web view loads before the test "
                         "(default about:blank; a path is taken from base_url)")


@pytest.hookimpl(hookwrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser) -> Iterator[None]:
    yield
    # Every plugin is registered by now. `--base-url` and the ini's `base_url` come from
    # pytest-base-url, else from pytest-playwright; with neither (not installed, or -p no:…),
    # from here, for the shell's `base_url`.
    manager = early_config.pluginmanager
    base_url_plugin = sys.modules.get("pytest_base_url.plugin")
    if manager.hasplugin("playwright") or (base_url_plugin is not None and manager.is_registered(base_url_plugin)):
        return
    parser.addini("base_url", help="base url for the application under test.")
    parser.getgroup("bridged").addoption(
        "--base-url", metavar="url", default=os.environ.get("PYTEST_BASE_URL"),
        help="base url for the application under test (with --bridged-shell, default: the daemon's)")


def _session_params(config: pytest.Config) -> Dict[str, Any]:
    """The session.create params the options ask for; a usage error for a file or JSON that is not one."""
    opt = config.getoption
    params: Dict[str, Any] = {}
    if opt("--bridged-profile"):
        params["profile"] = opt("--bridged-profile")
    if opt("--bridged-platform"):
        params["platform"] = opt("--bridged-platform")
    path_configuration = opt("--bridged-path-configuration")
    if path_configuration:
        if re.match(r"(?i)^https?://", path_configuration):
            params["pathConfigurationUrl"] = path_configuration
        else:
            params["pathConfiguration"] = _json_file(path_configuration, "--bridged-path-configuration")
    components = opt("--bridged-bridge-components")
    if components is not None:
        params["bridgeComponents"] = [c for c in re.split(r"[\s,]+", components) if c]
    capacitor = opt("--bridged-capacitor")
    if capacitor:
        if capacitor.lstrip().startswith("{"):
            try:
                params["capacitor"] = json.loads(capacitor)
            except ValueError as e:
                raise pytest.UsageError(f"--bridged-capacitor: not a JSON object: {e}") from None
        else:
            params["capacitor"] = _json_file(capacitor, "--bridged-capacitor")
        if not isinstance(params["capacitor"], dict):
            raise pytest.UsageError("--bridged-capacitor: a JSON object is needed ({\"appId\": …})")
    return params


def _json_file(path: str, option: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise pytest.UsageError(f"{option} {path}: {e.strerror or e}") from None
    except ValueError as e:
        raise pytest.UsageError(f"{option} {path}: not JSON: {e}") from None


def pytest_configure(config: pytest.Config) -> None:
    config.stash[SESSION_PARAMS_KEY] = _session_params(config)
    if config.getoption("--bridged-shell"):
        try:
            from . import _shell  # Playwright is imported only here: the library works without it
        except ImportError as e:
            raise pytest.UsageError(f"--bridged-shell needs Playwright for Python ({e}): "
                                    "pip install 'bridged[playwright]' (from a checkout: "
                                    "pip install './clients/python[playwright]')") from None
        _shell.register(config)


@pytest.fixture(scope="session")
def bridged_daemon(request: pytest.FixtureRequest) -> Iterator[Daemon]:
    """A bridged daemon shared by the whole test session (``bridged.Daemon``); with
    ``--bridged-shell`` it runs with ``--devtools``."""
    opt = request.config.getoption
    args = shlex.split(opt("--bridged-args") or "")
    if opt("--bridged-shell") and "--devtools" not in args:
        args.insert(0, "--devtools")
    with Daemon(binary=opt("--bridged-binary"), static=opt("--bridged-static"), config=opt("--bridged-config"),
                args=args) as daemon:
        yield daemon


@pytest.fixture
def bridged_controller(bridged_daemon: Daemon) -> Iterator[Controller]:
    """A controller of ``bridged_daemon`` for one test; its sessions are closed after it."""
    with bridged_daemon.controller() as controller:
        yield controller


@pytest.fixture
def bridged_session_params(pytestconfig: pytest.Config) -> Dict[str, Any]:
    """The params (besides ``url`` and ``browser``) of ``session.create`` for the shell's session
    of a test: ``profile``, ``platform``, ``pathConfiguration`` or ``pathConfigurationUrl``,
    ``bridgeComponents``, ``capacitor``, as the ``--bridged-…`` options give them."""
    params: Dict[str, Any] = json.loads(json.dumps(pytestconfig.stash[SESSION_PARAMS_KEY]))  # a copy a test may change
    return params


@pytest.fixture
def bridged_session() -> None:
    """The test's browser session, with ``--bridged-shell`` (this stand-in only says so)."""
    pytest.fail("the fixture bridged_session needs pytest --bridged-shell", pytrace=False)
