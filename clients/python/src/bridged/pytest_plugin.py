"""The pytest plugin of bridged (entry point ``pytest11``: loaded once the package is installed).

Fixtures:

- ``bridged_daemon`` (session scope): one ``bridged.Daemon`` for the whole test run, stopped at
  its end. Options: ``--bridged-binary PATH`` (else ``$BRIDGED_BIN``, else ``bridged`` on PATH),
  ``--bridged-static DIR`` (``--static``), ``--bridged-config FILE`` (``--config``).
- ``bridged_controller`` (function scope): a ``bridged.Controller`` on that daemon, closed after
  the test together with the sessions it created.
"""
from __future__ import annotations

from typing import Iterator

import pytest

from ._controller import Controller
from ._daemon import Daemon


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bridged", "bridged daemon (fixture bridged_daemon)")
    group.addoption("--bridged-binary", metavar="PATH", default=None,
                    help="the bridged executable (default: $BRIDGED_BIN, else bridged on PATH)")
    group.addoption("--bridged-static", metavar="DIR", default=None,
                    help="served under /app/ by the daemon (its --static)")
    group.addoption("--bridged-config", metavar="FILE", default=None,
                    help="the daemon's routing configuration (its --config)")


@pytest.fixture(scope="session")
def bridged_daemon(request: pytest.FixtureRequest) -> Iterator[Daemon]:
    """A bridged daemon shared by the whole test session (``bridged.Daemon``)."""
    opt = request.config.getoption
    with Daemon(binary=opt("--bridged-binary"), static=opt("--bridged-static"), config=opt("--bridged-config")) as daemon:
        yield daemon


@pytest.fixture
def bridged_controller(bridged_daemon: Daemon) -> Iterator[Controller]:
    """A controller of ``bridged_daemon`` for one test; its sessions are closed after it."""
    with bridged_daemon.controller() as controller:
        yield controller
