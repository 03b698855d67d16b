"""A PEP 517 / PEP 660 build backend for the bridged client, with the standard library only.

It reads the metadata from pyproject.toml ([project]: name, description, readme,
requires-python, license, license-files, dependencies, optional-dependencies, classifiers,
entry-points) and the version from src/bridged/__init__.py, and packs src/bridged into a
pure-Python wheel (the license files in its .dist-info).
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "bridged"
ZIP_DATE = (2020, 1, 1, 0, 0, 0)


def _toml(text):
    """The subset of TOML this project's pyproject.toml uses: tables, strings, arrays of strings
    (across lines too). tomllib parses it where Python has it (3.11+)."""
    try:
        import tomllib  # type: ignore[import-not-found]
        return tomllib.loads(text)
    except ImportError:
        pass
    data, table = {}, {}
    data_table = data
    pending = None
    for raw in text.splitlines():
        line = re.sub(r"\s+#.*$", "", raw).strip() if not raw.strip().startswith("#") else ""
        if pending is not None:
            pending[1].append(line)
            if line.endswith("]"):
                key, parts = pending
                table[key] = re.findall(r'"((?:[^"\\]|\\.)*)"', " ".join(parts))
                pending = None
            continue
        if not line:
            continue
        m = re.match(r"^\[([^\]]+)\]$", line)
        if m:
            table = data_table
            for part in m.group(1).split("."):
                table = table.setdefault(part.strip(), {})
            continue
        key, _, value = line.partition("=")
        key, value = key.strip().strip('"'), value.strip()
        if value.startswith("[") and not value.endswith("]"):
            pending = (key, [value])
        elif value.startswith("["):
            table[key] = re.findall(r'"((?:[^"\\]|\\.)*)"', value)
        elif value.startswith('"'):
            table[key] = value[1:-1]
        else:
            table[key] = value
    return data


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        project = _toml(f.read())["project"]
    with open(os.path.join(ROOT, "src", PACKAGE, "__init__.py"), encoding="utf-8") as f:
        project["version"] = re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)
    return project


def _metadata(project):
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}",
             f"Summary: {project['description']}", f"Requires-Python: {project['requires-python']}"]
    if project.get("license"):
        lines.append(f"License: {project['license']}")  # an SPDX expression (pyproject's PEP 639 form)
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {d}; extra == "{extra}"' for d in requirements]
    with open(os.path.join(ROOT, project["readme"]), encoding="utf-8") as f:
        readme = f.read()
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + readme


def _entry_points(project):
    out = []
    for group, entries in project.get("entry-points", {}).items():
        out.append(f"[{group}]")
        out += [f"{name} = {target}" for name, target in entries.items()]
        out.append("")
    return "\n".join(out)


def _license_files(project):
    """{name: bytes} of pyproject's license-files (LICENSE links to the repository's)."""
    files = {}
    for name in project.get("license-files", []):
        with open(os.path.join(ROOT, name), "rb") as f:
            files[name] = f.read()
    return files


def _dist_info_files(project):
    wheel = "Wheel-Version: 1.0\nGenerator: bridged-backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files = {"METADATA": _metadata(project), "WHEEL": wheel, "entry_points.txt": _entry_points(project)}
    files.update({f"licenses/{name}": data for name, data in _license_files(project).items()})
    return files


def _write_wheel(directory, project, files):
    """files: {archive name: bytes}. Adds the dist-info and RECORD; returns the wheel's name."""
    name, version = project["name"], project["version"]
    dist_info = f"{name}-{version}.dist-info"
    for fname, text in _dist_info_files(project).items():
        files[f"{dist_info}/{fname}"] = text if isinstance(text, bytes) else text.encode("utf-8")
    record = []
    for arcname, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{arcname},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel_name = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data in files.items():
            info = zipfile.ZipInfo(arcname, ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return wheel_name


def _package_files():
    src = os.path.join(ROOT, "src")
    files = {}
    for dirpath, dirnames, filenames in os.walk(os.path.join(src, PACKAGE)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fname in sorted(filenames):
            if fname.endswith((".py", ".typed")):
                path = os.path.join(dirpath, fname)
                with open(path, "rb") as f:
                    files[os.path.relpath(path, src).replace(os.sep, "/")] = f.read()
    return files


# -- PEP 517 ----------------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _project(), _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a wheel holding a .pth file that puts src/ on sys.path."""
    path = os.path.join(ROOT, "src") + "\n"
    return _write_wheel(wheel_directory, _project(), {f"_{PACKAGE}_editable.pth": path.encode()})


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    base = f"{project['name']}-{project['version']}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel in ["pyproject.toml", "README.md", "_build/backend.py"] + [
                f"src/{p}" for p in _package_files()]:
            tar.add(os.path.join(ROOT, rel), arcname=f"{base}/{rel}")
        # PKG-INFO, and the license files by content (LICENSE is a link out of this directory).
        extra = {name: data for name, data in _license_files(project).items()}
        extra["PKG-INFO"] = _metadata(project).encode()
        for member, data in extra.items():
            info = tarfile.TarInfo(f"{base}/{member}")
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return name
