#!/bin/sh
# Build the RPMs from the tree with rpmbuild (make rpm; Debian's `rpm` package has it):
#   pcp-pmda-lustreclient-<version>-1.<arch>.rpm   the agent, PCP's views and rules
#   lustre-jobreport-<version>-1.noarch.rpm        the node package
# and their source RPMs in OUTDIR/srpm, which an EL host rebuilds against its own PCP and
# python3 (`dnf builddep`, `rpmbuild --rebuild`: docs/admin.md). No admin package: pyarrow and
# DuckDB are in no EL repository, and the admin side runs in a Python 3.10+ venv there.
# Steps: a source tarball of the tree's files; each spec from its .in with the version of
# reporter/pyproject.toml (an SRPM rebuilt elsewhere carries it); rpmbuild -ba in a private
# _topdir. BuildRequires are not checked here (--nodeps): they are EL's package names, which
# Debian's rpm database does not know.
#   packaging/rpm/build.sh OUTDIR
# Prints the binary RPMs' paths, one a line.
set -eu
OUT=${1:?output directory}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$TOP/packaging/rpm
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$TOP/reporter/pyproject.toml")
T=$OUT/.rpmbuild
rm -rf "$T"
mkdir -p "$T/SOURCES" "$T/SPECS" "$OUT/srpm"
# the tree's files (tracked, and new ones not ignored), not its build products
(cd "$TOP" && git ls-files -co --exclude-standard) |
    tar -C "$TOP" -cf - --transform "s|^|lustre-jobreport-$VERSION/|" -T - | gzip -1 > "$T/SOURCES/lustre-jobreport-$VERSION.tar.gz"
cp "$TOP/packaging/scriptlets.sh" "$HERE"/*.rpmlintrc "$T/SOURCES/"
for pkg in pcp-pmda-lustreclient lustre-jobreport; do
    spec=$T/SPECS/$pkg.spec
    sed "s/@VERSION@/$VERSION/g" "$HERE/$pkg.spec.in" > "$spec"
    rpmbuild -ba --nodeps --define "_topdir $T" "$spec" > "$T/$pkg.log" 2>&1 ||
        { tail -n 30 "$T/$pkg.log" >&2; exit 1; }
done
find "$T/RPMS" -name '*.rpm' -exec mv {} "$OUT/" \;
find "$T/SRPMS" -name '*.rpm' -exec mv {} "$OUT/srpm/" \;
ls "$OUT"/*.rpm
rm -rf "$T"
