#!/bin/sh
# Build the RPMs from the tree with rpmbuild (make rpm; Debian's `rpm` package has it):
# a source tarball of the tree's files, then rpmbuild -bb of packaging/rpm/lustre-jobreport.spec
# in a private _topdir. BuildRequires are not checked (--nodeps): on Debian they are
# Debian packages, which rpm's database does not know.
#   packaging/rpm/build.sh OUTDIR
set -eu
OUT=${1:?output directory}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$TOP/reporter/pyproject.toml")
T=$OUT/.rpmbuild
rm -rf "$T"
mkdir -p "$T/SOURCES" "$T/stage"
# the tree's files (tracked, and new ones not ignored), not its build products
(cd "$TOP" && git ls-files -co --exclude-standard) |
    tar -C "$TOP" -cf - --transform "s|^|lustre-jobreport-$VERSION/|" -T - | gzip -1 > "$T/SOURCES/lustre-jobreport-$VERSION.tar.gz"
cp "$TOP/packaging/scriptlets.sh" "$T/SOURCES/"
rpmbuild -bb --nodeps --quiet --define "_topdir $T" --define "ljr_version $VERSION" \
    "$TOP/packaging/rpm/lustre-jobreport.spec" > "$T/rpmbuild.log" 2>&1 ||
    { tail -n 30 "$T/rpmbuild.log" >&2; exit 1; }
find "$T/RPMS" -name '*.rpm' -exec mv {} "$OUT/" \;
ls "$OUT"/*.rpm
rm -rf "$T"
