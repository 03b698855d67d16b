#!/usr/bin/env bash
# Installs what bridged needs and is missing. With --test, also what the test suites need; with
# --deb, what building the Debian package needs (scripts/build-deb.sh: dpkg-dev, lintian).
# Safe to run again: it installs only what is absent.
set -euo pipefail
want_test=0
want_deb=0
for arg in "$@"; do
  case "$arg" in
    --test) want_test=1 ;;
    --deb) want_deb=1 ;;
    *) echo "install-deps.sh: unknown option $arg (--test, --deb)" >&2; exit 2 ;;
  esac
done

apt_pkgs=()
command -v pkg-config >/dev/null 2>&1 || apt_pkgs+=(pkg-config)
if ! pkg-config --exists libwebsockets 2>/dev/null; then apt_pkgs+=(libwebsockets-dev); fi
if [ $want_test = 1 ]; then
  command -v chromium >/dev/null 2>&1 || apt_pkgs+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || apt_pkgs+=(chromium-driver)
  command -v node >/dev/null 2>&1 || apt_pkgs+=(nodejs)
  # The farm tests run the daemons behind both proxies (Tests/integration/test_farm.py).
  [ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || apt_pkgs+=(nginx)
  [ -x /usr/sbin/haproxy ] || command -v haproxy >/dev/null 2>&1 || apt_pkgs+=(haproxy)
  # make test-python-client installs clients/python into a fresh venv (Debian's python3: python3-venv).
  ${PYTHON:-python3} -c 'import ensurepip, venv' >/dev/null 2>&1 || apt_pkgs+=(python3-venv)
fi
if [ $want_deb = 1 ]; then
  command -v dpkg-shlibdeps >/dev/null 2>&1 || apt_pkgs+=(dpkg-dev)
  command -v strip >/dev/null 2>&1 || apt_pkgs+=(binutils)
  command -v lintian >/dev/null 2>&1 || apt_pkgs+=(lintian)
fi
if [ ${#apt_pkgs[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "installing: ${apt_pkgs[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${apt_pkgs[@]}" >/dev/null
fi

if [ $want_test = 1 ]; then
  py=${PYTHON:-python3}
  if ! $py -c 'import websockets, pytest, selenium, prometheus_client, playwright' >/dev/null 2>&1; then
    # Playwright attaches to the daemon's own Chromium (connect_over_cdp, Tests/integration/test_playwright.py):
    # no `playwright install`, no browser download. pytest-playwright is not installed here: its
    # fixtures (page, browser, …) would join every suite; make test-python-client puts it in its own
    # venv (clients/python's extra `playwright`).
    echo "installing: python websockets pytest selenium prometheus_client playwright"
    $py -m pip install -q --disable-pip-version-check websockets pytest selenium prometheus_client playwright
  fi
fi

if [ $want_test = 1 ]; then
  # Turbo 7.1.0 for the hotwire-native tests (Tests/integration/test_hotwire.py), from PyPI.
  "$(dirname "$0")/fetch-turbo.sh"
fi
