"""Selenium over Debian's chromium + chromium-driver, for the tests that drive the browser's own
buttons (test_back_button.py) and watch the dashboard (test_dashboard.py).

`chrome()` starts a headless Chromium through /usr/bin/chromedriver (never Selenium Manager,
which would try the network). Screenshots go to `artifacts_dir()`: $BRIDGED_TEST_ARTIFACTS, else
`test-artifacts/` at the top of the repository (git-ignored).
"""

from __future__ import annotations

import os
import pathlib
import shutil

from browser_support import find_chromium

REPO = pathlib.Path(__file__).resolve().parents[2]


def find_chromedriver() -> str | None:
    for candidate in (os.environ.get("CHROMEDRIVER"), "chromedriver", "/usr/lib/chromium/chromedriver"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def missing() -> str | None:
    """Why the Selenium tests cannot run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (`make deps-test` installs it)"
    if find_chromium() is None:
        return "chromium is not installed (Debian package `chromium`; `make deps-test` installs it)"
    if find_chromedriver() is None:
        return "chromedriver is not installed (Debian package `chromium-driver`; `make deps-test` installs it)"
    return None


def chrome(width: int = 1280, height: int = 900):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_AVOID_STATS", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = find_chromium()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                f"--window-size={width},{height}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=find_chromedriver()))
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    return driver


def artifacts_dir() -> pathlib.Path:
    path = pathlib.Path(os.environ.get("BRIDGED_TEST_ARTIFACTS") or REPO / "test-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def screenshot(driver, name: str) -> pathlib.Path:
    path = artifacts_dir() / f"{name}.png"
    driver.save_screenshot(str(path))
    return path
