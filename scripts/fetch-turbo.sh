#!/usr/bin/env bash
# Puts a real Turbo where the hotwire-native tests find it, from PyPI (no npm registry here):
# the django-turbojs 0.5.3 wheel ships Turbo 7.1.0 as a UMD bundle. Never committed: the
# folder is ignored. Safe to run again: it does nothing when the file is there.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=Tests/integration/hotwire_app/vendor
file=$dest/turbo-7.1.0.min.js
[ -s "$file" ] && exit 0
py=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetching Turbo 7.1.0 (django-turbojs 0.5.3 from PyPI)"
$py -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: -d "$tmp" django-turbojs==0.5.3
mkdir -p "$dest"
$py - "$tmp" "$file" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/django_turbojs-0.5.3-*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    data = z.read("turbo/static/turbo/js/turbo.min.js")
if b"Turbo 7.1.0" not in data[:200]:
    sys.exit("unexpected turbo.min.js in " + wheel)
open(sys.argv[2], "wb").write(data)
PY
echo "installed $file"
