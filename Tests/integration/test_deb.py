"""The Debian package (`make deb`, docs/INSTALL.md): what it holds and declares, and that its
`bridged` runs on a machine without Swift.

The package is dist/bridged_VERSION_amd64.deb (VERSION from Sources/BridgeProtocol/Bridge/
Version.swift), or $BRIDGED_DEB. `make test` builds it before the integration tests and sets
BRIDGED_DEB_REQUIRED=1, so a missing package fails there; run alone, the tests skip without one.

"Without Swift" is a private mount namespace (`unshare -m`) with an empty tmpfs over /opt/swift,
where the toolchain and its shared libraries live: the extracted binary runs `--version`, `serve`
(/healthz), a browser session in Chromium on the Astro demo, and `bridged check` on the demo PWA
there. A control shows the hiding bites: the normal build (linked to the toolchain's libraries)
does not start in the same namespace.
"""
import asyncio
import gzip
import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from bridgeclient import controller
from browser_sessions_support import DEMO, TIMEOUT, create, stack_is, wait_until
from conftest import REPO, http_request, start_daemon

SWIFT_HOME = "/opt/swift"
VERSION_SWIFT = REPO / "Sources/BridgeProtocol/Bridge/Version.swift"


def source_version() -> str:
    m = re.search(r'static let string = "([^"]+)"', VERSION_SWIFT.read_text())
    assert m, f"no version in {VERSION_SWIFT}"
    return m.group(1)


def deb_path() -> pathlib.Path | None:
    env = os.environ.get("BRIDGED_DEB")
    path = pathlib.Path(env) if env else REPO / "dist" / f"bridged_{source_version()}_amd64.deb"
    if path.is_file():
        return path
    if env or os.environ.get("BRIDGED_DEB_REQUIRED") == "1":
        pytest.fail(f"no package at {path}: run `make deb`")
    return None


def namespace_prefix() -> list[str] | None:
    """The command prefix that runs a program with /opt/swift hidden: a mount namespace (as root,
    else inside a user namespace), an empty tmpfs mounted over /opt/swift, then exec. None when
    this machine allows neither."""
    script = f'mount -t tmpfs bridged-no-swift {SWIFT_HOME} && [ -z "$(ls -A {SWIFT_HOME})" ] && exec "$@"'
    for unshare in (["unshare", "-m"], ["unshare", "-r", "-m"]):
        prefix = [*unshare, "--", "sh", "-c", script, "sh"]
        try:
            if subprocess.run([*prefix, "true"], capture_output=True, timeout=10).returncode == 0:
                return prefix
        except (OSError, subprocess.TimeoutExpired):
            pass
    return None


def clean_env() -> dict:
    """The environment without any path into the toolchain."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD", "BRIDGED_TOKEN")}
    env["PATH"] = ":".join(p for p in env.get("PATH", "").split(":") if p and not p.startswith(SWIFT_HOME))
    return env


class Package:
    def __init__(self, deb: pathlib.Path, root: pathlib.Path, prefix: list[str] | None):
        self.deb = deb
        self.root = root
        self.bin = root / "usr/bin/bridged"
        self.prefix = prefix

    def field(self, name: str) -> str:
        return subprocess.run(["dpkg-deb", "-f", str(self.deb), name], capture_output=True, text=True,
                              check=True).stdout.strip()

    def hidden(self) -> list[str]:
        """The command that runs the package's bridged with /opt/swift hidden."""
        if self.prefix is None:
            pytest.skip("no mount namespace here (unshare -m and unshare -r -m both refused)")
        return [*self.prefix, str(self.bin)]

    def run_hidden(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run([*self.hidden(), *args], capture_output=True, text=True, timeout=timeout,
                              env=clean_env(), stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    deb = deb_path()
    if deb is None:
        pytest.skip("no package in dist/: run `make deb` (make test builds it)")
    root = tmp_path_factory.mktemp("deb-root")
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    return Package(deb, root, namespace_prefix())


def test_control_declares_version_depends_and_recommends(package):
    assert package.field("Package") == "bridged"
    assert package.field("Version") == source_version()
    assert package.field("Architecture") == "amd64"
    depends = [d.strip().split()[0] for d in package.field("Depends").split(",")]
    # From dpkg-shlibdeps (what the binary links) and the libuv glue the transport dlopens.
    for name in ("libwebsockets17", "libwebsockets-evlib-uv", "libuv1", "libc6"):
        assert name in depends, (name, depends)
    assert not any("swift" in d for d in depends), depends
    assert [r.strip().split()[0] for r in package.field("Recommends").split(",")] == ["chromium"]
    assert package.deb.name == f"bridged_{source_version()}_amd64.deb"


def test_package_holds_binary_man_pages_units_and_docs(package):
    root = package.root
    assert os.access(package.bin, os.X_OK)
    pages = sorted(p.name for p in (root / "usr/share/man/man1").iterdir())
    assert "bridged.1.gz" in pages and all(re.fullmatch(r"bridged[.\w-]*\.1\.gz", p) for p in pages), pages
    # One page per subcommand, from the argument parser's own description of the commands.
    assert "bridged.check.1.gz" in pages and "bridged.serve.1.gz" in pages, pages
    main = gzip.decompress((root / "usr/share/man/man1/bridged.1.gz").read_bytes()).decode()
    assert main.startswith(".\\\"") or ".Dd" in main or ".TH" in main
    assert "serve" in main and "check" in main
    serve = gzip.decompress((root / "usr/share/man/man1/bridged.serve.1.gz").read_bytes()).decode()
    # mdoc: `Fl -static` is the flag --static; the NAME line is what whatis indexes.
    assert "Fl -static Ar dir" in serve and "\n.Nm bridged.serve\n" in serve and '.Nm "bridged serve"' in serve
    units = root / "lib/systemd/system"
    for unit in ("bridged.service", "bridged@.service"):
        text = (units / unit).read_text()
        assert re.search(r"^ExecStart=/usr/bin/bridged ", text, re.M), text
        assert "/usr/local" not in text
    # Installed, not enabled: no symlink into a target's .wants, no maintainer script to enable it.
    assert not (root / "etc").exists()
    info = subprocess.run(["dpkg-deb", "--ctrl-tarfile", str(package.deb)], capture_output=True, check=True).stdout
    names = subprocess.run(["tar", "-t"], input=info, capture_output=True, check=True).stdout.decode().split()
    assert sorted(n.lstrip("./") for n in names if n.strip("./")) == ["control", "md5sums"], names
    doc = root / "usr/share/doc/bridged"
    assert (doc / "copyright").read_text().startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
    assert gzip.decompress((doc / "changelog.gz").read_bytes()).decode().startswith(f"bridged ({source_version()})")
    assert (doc / "docs/DEPLOY.md").is_file() and (doc / "README.md").is_file() and (doc / "examples/app.yaml").is_file()


def test_binary_links_no_swift_library(package):
    out = subprocess.run(["ldd", str(package.bin)], capture_output=True, text=True, check=True).stdout
    assert "libwebsockets.so" in out, out
    assert "not found" not in out, out
    assert not re.search(r"libswift|libFoundation|libdispatch|libBlocksRuntime|/opt/swift", out), out


def test_swift_is_really_hidden(package):
    """The namespace hides the toolchain: inside, /opt/swift is empty and a program linked to the
    toolchain's libraries (the normal build, when there is one) cannot start."""
    if not os.listdir(SWIFT_HOME):
        pytest.skip(f"{SWIFT_HOME} is empty here: nothing to hide")
    prefix = package.hidden()[:-1]
    seen = subprocess.run([*prefix, "ls", "-A", SWIFT_HOME], capture_output=True, text=True, timeout=10)
    assert seen.returncode == 0 and seen.stdout == "", seen
    normal = os.environ.get("BRIDGED_BIN") or str(REPO / ".build/release/bridged")
    if os.access(normal, os.X_OK) and "libswiftCore" in subprocess.run(["ldd", normal], capture_output=True, text=True).stdout:
        r = subprocess.run([*prefix, normal, "--help"], capture_output=True, text=True, timeout=30, env=clean_env())
        assert r.returncode != 0 and "libswift" in r.stderr, r


def test_version_without_swift(package):
    r = package.run_hidden("--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == package.field("Version") == source_version()


def test_serve_and_a_browser_session_without_swift(package):
    if shutil.which("chromium") is None:
        pytest.skip("chromium is not installed (scripts/install-deps.sh --test installs it)")
    d = start_daemon("--static", DEMO, command=package.hidden(), env=clean_env())
    try:
        status, _, body = http_request(d, "/healthz")
        assert status == 200, body
        assert json.loads(body)["version"] == source_version()

        async def session():
            c = await controller(d.ws_url)
            s = await create(c, d.url + "/app/astro.html")
            await wait_until(c, s, "W1", "document.body.dataset.inApp === 'true' && document.body.dataset.renders === '1'")
            await c.request("webview.click", {"session": s, "webview": "W1", "selector": "#astro-deals"})
            await stack_is(c, s, "P1 W1")
            await c.next_event("foreground.removed", TIMEOUT, where=lambda p: p["session"] == s and p["reason"] == "rendered")
            shot = await c.request("session.screenshot", {"session": s})
            assert shot["mimeType"] == "image/jpeg"
            await c.request("navigation.back", {"session": s})
            await stack_is(c, s, "W1")
            await c.request("session.close", {"session": s})
            await c.close()

        asyncio.run(session())
    finally:
        assert d.stop() == 0, d.stderr()


def test_check_on_the_demo_without_swift(package, tmp_path):
    if shutil.which("chromium") is None:
        pytest.skip("chromium is not installed (scripts/install-deps.sh --test installs it)")
    # The app is served by the package's own daemon; `check` starts another (its own binary,
    # /proc/self/exe) inside the same namespace.
    d = start_daemon("--static", DEMO, command=package.hidden(), env=clean_env())
    try:
        steps = tmp_path / "demo.yaml"
        steps.write_text("""
- expect: {stack: "W1"}
- click: "#nav-products"
- expect: {stack: "P1 W1(*P)"}
- back
- expect: {stack: "W1(*P)"}
""")
        # As in the CI example of docs/INSTALL.md and docs/CHECK.md.
        junit, report, trace = tmp_path / "check.xml", tmp_path / "check.html", tmp_path / "check.jsonl"
        r = package.run_hidden("check", f"{d.url}/app/", "--steps", str(steps), "--junit", str(junit),
                               "--report", str(report), "--trace", str(trace), timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.splitlines()[-1].startswith("app-aware"), r.stdout
        assert "<testsuites" in junit.read_text() and "app-aware" in report.read_text()
        assert json.loads(trace.read_text().splitlines()[0])["version"] == source_version()
    finally:
        assert d.stop() == 0, d.stderr()


def test_apt_resolves_its_dependencies(package):
    """`apt install ./bridged_VERSION_amd64.deb` (docs/INSTALL.md), simulated: every Depends
    names a package apt knows here, in a version it has."""
    if shutil.which("apt-get") is None:
        pytest.skip("no apt-get here")
    r = subprocess.run(["apt-get", "install", "-s", "-o", "Debug::NoLocking=1", str(package.deb.resolve())],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(rf"^Inst bridged \({re.escape(source_version())} ", r.stdout, re.M), r.stdout
