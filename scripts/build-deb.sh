#!/usr/bin/env bash
# Builds dist/bridged_VERSION_amd64.deb from this checkout (`make deb`; docs/INSTALL.md).
#
#   1. /usr/bin/bridged, built with --static-swift-stdlib (no Swift library needed at run time);
#   2. the manual pages, from the argument parser's generator (the tool behind `swift package
#      plugin generate-manual`, run on that binary to read its commands and options);
#   3. VERSION is what that binary's `--version` prints (the one source: BridgedVersion in
#      Sources/BridgeProtocol/Bridge/Version.swift); packaging/debian/changelog must start with it;
#   4. Depends: what the binary links (dpkg-shlibdeps), plus the libuv event library of
#      libwebsockets that the transport dlopens (libwebsockets-evlib_uv.so);
#   5. the tree (binary, man pages, systemd units, docs, copyright, changelog), then dpkg-deb;
#   6. lintian, when it is installed: any error fails the build.
#
# Everything is built under $DEB_SCRATCH (default .build-deb), apart from the normal .build.
# File dates in the package are the changelog's date (SOURCE_DATE_EPOCH), not the build's.
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022

SWIFT=${SWIFT:-swift}
SCRATCH=${DEB_SCRATCH:-.build-deb}
OUT=${DEB_OUT:-dist}
PKG=packaging/debian
ARCH=amd64
EVLIB=libwebsockets-evlib_uv.so

die() { echo "build-deb: $*" >&2; exit 1; }

[ "$(uname -m)" = x86_64 ] || die "this script builds amd64 packages only (this machine: $(uname -m))"
for tool in dpkg-deb dpkg-shlibdeps dpkg-parsechangelog strip gzip; do
  command -v "$tool" >/dev/null || die "$tool is missing (scripts/install-deps.sh --deb installs it)"
done

changelog_version=$(dpkg-parsechangelog -l "$PKG/changelog" -S Version)
changelog_date=$(dpkg-parsechangelog -l "$PKG/changelog" -S Date)
export SOURCE_DATE_EPOCH=$(date -d "$changelog_date" +%s)
manual_date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)

# 1. The binary.
echo "build-deb: bridged with --static-swift-stdlib"
"$SWIFT" build -c release --product bridged --static-swift-stdlib --scratch-path "$SCRATCH"
bin="$SCRATCH/release/bridged"
if ldd "$bin" | grep -E 'libswift|libFoundation|libdispatch|libBlocksRuntime|/opt/swift' >&2; then
  die "$bin still needs the Swift libraries above"
fi

# 2. Manual pages (one per command: bridged.1, bridged.serve.1, …), by the argument parser's
# generator, the tool `swift package plugin generate-manual` runs. Run directly on the binary
# above: the plugin would first build the whole package again in release mode, without
# --static-swift-stdlib (3 min of CPU more).
echo "build-deb: manual pages"
"$SWIFT" build --product generate-manual --scratch-path "$SCRATCH"
manual_dir="$SCRATCH/manual"
rm -rf "$manual_dir" && mkdir -p "$manual_dir"
"$SCRATCH/debug/generate-manual" "$bin" --multi-page --date "$manual_date" --section 1 --output-directory "$manual_dir"
[ -f "$manual_dir/bridged.1" ] || die "the generator wrote no bridged.1"
# The NAME line of a subcommand's page reads `.Nm "bridged serve"`, which whatis/apropos cannot
# index (lintian: bad-whatis-entry): name the page bridged.serve there, as `man bridged.serve`
# does, and keep "bridged serve" where the page shows the command (a bare .Nm repeats the NAME).
for page in "$manual_dir"/bridged.*.1; do
  name=$(basename "$page" .1)
  command=${name//./ }
  sed -i -e "0,/^\.Nm \"$command\"\$/s//.Nm $name/" -e "s/^\.Nm\$/.Nm \"$command\"/" "$page"
done

# 3. The version.
version=$("$bin" --version)
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "bridged --version printed '$version', not a version"
[ "$version" = "$changelog_version" ] ||
  die "bridged --version is $version but $PKG/changelog starts with $changelog_version: add a changelog entry for $version"

# 5. The tree.
stage="$SCRATCH/deb/bridged_${version}_${ARCH}"
rm -rf "$stage"
mkdir -p "$stage/DEBIAN"
install -D -m 755 "$bin" "$stage/usr/bin/bridged"
strip --remove-section=.comment --remove-section=.note "$stage/usr/bin/bridged"

man="$stage/usr/share/man/man1"
mkdir -p "$man"
for page in "$manual_dir"/*.1; do
  gzip -9n -c "$page" >"$man/$(basename "$page").gz"
done

# The units of deploy/, pointed at the package's paths. Installed, not enabled.
units="$stage/lib/systemd/system"
mkdir -p "$units"
for unit in bridged.service bridged@.service; do
  sed -e '/install -m/d' \
      -e 's#/usr/local/bin/bridged#/usr/bin/bridged#g' \
      -e 's#file:///usr/local/share/doc/bridged/DEPLOY.md#file:///usr/share/doc/bridged/docs/DEPLOY.md#g' \
      "deploy/$unit" >"$units/$unit"
  if grep -n '/usr/local' "$units/$unit" >&2; then die "deploy/$unit names /usr/local paths the package does not have"; fi
done

doc="$stage/usr/share/doc/bridged"
mkdir -p "$doc/docs" "$doc/examples"
install -m 644 README.md "$doc/"
install -m 644 docs/*.md "$doc/docs/"
install -m 644 examples/* "$doc/examples/"
install -m 644 "$PKG/copyright" "$doc/copyright"
install -D -m 644 "$PKG/lintian-overrides" "$stage/usr/share/lintian/overrides/bridged"
gzip -9n -c "$PKG/changelog" >"$doc/changelog.gz"

# 4. Depends.
shlib_dir=$(mktemp -d)
mkdir -p "$shlib_dir/debian"
printf 'Source: bridged\n\nPackage: bridged\nArchitecture: any\n' >"$shlib_dir/debian/control"
shlibs=$(cd "$shlib_dir" && dpkg-shlibdeps -O -e "$OLDPWD/$stage/usr/bin/bridged" 2>/dev/null |
         sed -n 's/^shlibs:Depends=//p')
rm -rf "$shlib_dir"
[ -n "$shlibs" ] || die "dpkg-shlibdeps found no dependency"
grep -aq "$EVLIB" "$stage/usr/bin/bridged" || die "the binary no longer names $EVLIB: check how the transport loads libuv"
evlib_path=$(dpkg -S "*/$EVLIB" 2>/dev/null | head -1)
evlib_pkg=${evlib_path%%:*}
[ -n "$evlib_pkg" ] || die "no installed package holds $EVLIB (apt-get install libwebsockets-evlib-uv)"
evlib_version=$(dpkg-query -W -f='${Version}' "$evlib_pkg")
depends="$shlibs, $evlib_pkg (>= ${evlib_version%-*})"
case "$depends" in *libwebsockets*) ;; *) die "Depends does not name libwebsockets: $depends" ;; esac

installed_size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@DEPENDS@/$depends/" -e "s/@INSTALLED_SIZE@/$installed_size/" \
    "$PKG/control.in" >"$stage/DEBIAN/control"
(cd "$stage" && find usr lib -type f | LC_ALL=C sort | xargs md5sum) >"$stage/DEBIAN/md5sums"

find "$stage" -type d -exec chmod 755 {} +
find "$stage" -type f -exec chmod 644 {} +
chmod 755 "$stage/usr/bin/bridged"
find "$stage" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

mkdir -p "$OUT"
deb="$OUT/bridged_${version}_${ARCH}.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "build-deb: $deb ($(du -h "$deb" | cut -f1)); Depends: $depends"

# 6. lintian.
if command -v lintian >/dev/null; then
  lintian_out=$(lintian --info "$deb" 2>&1) || true
  [ -n "$lintian_out" ] && echo "$lintian_out"
  if grep -q '^E: ' <<<"$lintian_out"; then die "lintian reports errors on $deb"; fi
  echo "build-deb: lintian: no error"
else
  echo "build-deb: lintian is not installed: not checked (scripts/install-deps.sh --deb installs it)"
fi
