"""`pip install ./clients/python` into a fresh venv (no system packages): it builds with the
standard library alone (the in-tree backend) and brings only `websockets`, from PyPI or pip's
cache; its extra `playwright` brings Playwright and pytest-playwright, and with them a
pytest-playwright test file runs in bridged's shell (`pytest --bridged-shell`)."""
import json
import os
import pathlib
import subprocess
import venv

from samples import DEMO, PWA_TESTS

CLIENT = pathlib.Path(__file__).resolve().parents[1]
REPO = CLIENT.parents[1]


def fresh_venv(path):
    """A venv without the system's packages: (its python, an environment for it)."""
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(path)
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    return str(path / "bin" / "python"), environ


def pip_install(python, environ, *what):
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *what],
                   check=True, env=environ, timeout=600)


def test_pip_install_into_a_fresh_venv_then_the_playwright_extra(tmp_path):
    env_dir = tmp_path / "venv"
    python, environ = fresh_venv(env_dir)
    pip_install(python, environ, str(CLIENT))
    probe = """
import importlib.metadata as m, json, os, bridged
dist = m.distribution("bridged")
print(json.dumps({
    "version": bridged.__version__, "meta_version": dist.version,
    "requires": dist.requires, "extras": dist.metadata.get_all("Provides-Extra"),
    "license": dist.metadata["License"],
    "license_file": [str(f) for f in dist.files if f.name == "LICENSE"],
    "pytest11": [(e.name, e.value) for e in dist.entry_points if e.group == "pytest11"],
    "typed": os.path.exists(os.path.join(os.path.dirname(bridged.__file__), "py.typed")),
    "file": bridged.__file__,
    "installed": sorted(d.metadata["Name"].lower() for d in m.distributions()),
}))
"""
    out = json.loads(subprocess.run([python, "-c", probe], check=True, capture_output=True, text=True,
                                    env=environ, cwd=tmp_path).stdout)
    assert out["version"] == out["meta_version"]
    assert out["requires"] == ["websockets>=13", 'playwright>=1.40; extra == "playwright"',
                               'pytest-playwright>=0.5; extra == "playwright"']
    assert out["extras"] == ["playwright"]
    assert out["license"] == "Apache-2.0"
    assert len(out["license_file"]) == 1
    license_text = (env_dir / "lib").glob(f"python*/site-packages/{out['license_file'][0]}")
    assert next(license_text).read_text() == (REPO / "LICENSE").read_text()
    assert (REPO / "LICENSE").read_text().startswith("\n                                 Apache License\n                           Version 2.0, January 2004")
    assert out["pytest11"] == [["bridged", "bridged.pytest_plugin"]]
    assert out["typed"] is True
    assert out["file"].startswith(str(env_dir))
    assert set(out["installed"]) - {"pip", "setuptools"} == {"bridged", "websockets"}

    def pytest_(*args):
        return subprocess.run([python, "-m", "pytest", "-p", "no:cacheprovider", *args], capture_output=True,
                              text=True, env=environ, cwd=tmp_path, timeout=300)

    # Without the extra (pytest alone): the plugin loads, and the flag says what is missing.
    pip_install(python, environ, "pytest")
    (tmp_path / "test_plain.py").write_text("def test_plain(bridged_session_params):\n    assert bridged_session_params == {}\n")
    plain = pytest_("test_plain.py")
    assert plain.returncode == 0, plain.stdout + plain.stderr
    refused = pytest_("--bridged-shell", "test_plain.py")
    assert refused.returncode == 4, refused.stdout + refused.stderr
    assert "pip install 'bridged[playwright]'" in refused.stderr

    # With the extra: Playwright and pytest-playwright (no browser download), and a
    # pytest-playwright test file passes in the shell.
    pip_install(python, environ, f"{CLIENT}[playwright]")
    installed = subprocess.run([python, "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
                               check=True, capture_output=True, text=True, env=environ).stdout
    assert {"playwright", "pytest-playwright"} <= {p["name"].lower() for p in json.loads(installed)}
    (tmp_path / "test_app.py").write_text(PWA_TESTS)
    run = pytest_("--bridged-shell", "--bridged-static", DEMO, "-v", "test_app.py")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed" in run.stdout
