"""`pip install ./clients/python` into a fresh venv (no system packages): it builds with the
standard library alone (the in-tree backend) and brings only `websockets`, from PyPI or pip's
cache."""
import json
import os
import pathlib
import subprocess
import sys
import venv

CLIENT = pathlib.Path(__file__).resolve().parents[1]


def test_pip_install_into_a_fresh_venv(tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    python = str(env_dir / "bin" / "python")
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", str(CLIENT)],
                   check=True, env=environ, timeout=600)
    probe = """
import importlib.metadata as m, json, os, bridged
dist = m.distribution("bridged")
print(json.dumps({
    "version": bridged.__version__, "meta_version": dist.version,
    "requires": dist.requires,
    "pytest11": [(e.name, e.value) for e in dist.entry_points if e.group == "pytest11"],
    "typed": os.path.exists(os.path.join(os.path.dirname(bridged.__file__), "py.typed")),
    "file": bridged.__file__,
    "installed": sorted(d.metadata["Name"].lower() for d in m.distributions()),
}))
"""
    out = json.loads(subprocess.run([python, "-c", probe], check=True, capture_output=True, text=True,
                                    env=environ, cwd=tmp_path).stdout)
    assert out["version"] == out["meta_version"]
    assert out["requires"] == ["websockets>=13"]
    assert out["pytest11"] == [["bridged", "bridged.pytest_plugin"]]
    assert out["typed"] is True
    assert out["file"].startswith(str(env_dir))
    assert set(out["installed"]) - {"pip", "setuptools"} == {"bridged", "websockets"}
