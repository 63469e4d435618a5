#!/bin/sh
# Build the Debian packages from the tree (make deb):
#   pcp-pmda-lustreclient_<version>_<arch>.deb   the agent, PCP's views and rules (built against
#                                                this system's PCP)
#   lustre-jobreport_<version>_all.deb           the node package: the reporter's code, hooks,
#                                                config; any Debian with python3 >= 3.9
#   lustre-jobreport-admin_<version>_<arch>.deb  the admin node's: pyarrow and DuckDB for this
#                                                python3's minor version, the simulator, the
#                                                compaction timer
# Files come from packaging/install.sh (the layout the RPM spec uses too); this script adds
# what Debian needs: control (dependencies from dpkg-shlibdeps), conffiles (everything under
# /etc), maintainer scripts, md5sums, changelog.Debian.gz. Plain dpkg-deb, not debhelper: the
# admin package bundles prebuilt wheels that dh_strip and dh_shlibdeps would rewrite or reject.
#
#   packaging/deb/build.sh OUTDIR
# Environment: PIP_PYTHON as for install.sh (the admin package); DEB_VERSION (default
# <pyproject version>-1); DEB_ONLY="<package> ..." builds those alone; DEB_COMPRESS (default:
# xz for the node package, which goes on every release and Debian 11's dpkg 1.20 reads no zstd;
# for the others, built on the release they go on, zstd where this dpkg-deb writes it).
set -eu
OUT=${1:?output directory}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$TOP/packaging/deb
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$OUT/.build
UPSTREAM=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$TOP/reporter/pyproject.toml")
VERSION=${DEB_VERSION:-$UPSTREAM-1}
ARCH=$(dpkg --print-architecture)
PYTHON=${PYTHON:-/usr/bin/python3}
export PYTHON
# the admin package's wheels are for this python3's minor version, and for no other
PYDEPENDS=$("$PYTHON" -c 'import sys; v = sys.version_info; print(f"python3 (>= {v[0]}.{v[1]}~), python3 (<< {v[0]}.{v[1] + 1})")')
rm -rf "$W"
mkdir -p "$W/shlibs/debian"
# dpkg-shlibdeps wants a source package around it
printf 'Source: lustre-jobreport\n\nPackage: lustre-jobreport\nArchitecture: any\n' > "$W/shlibs/debian/control"

shlibs() {	# ROOT: the Depends of the ELF files under ROOT (libraries bundled there excluded)
    elves=$(find "$1" -type f \( -name '*.so' -o -name '*.so.*' -o -perm -u+x \) -exec sh -c \
        'for f; do if head -c 4 "$f" | grep -q ELF; then echo "$f"; fi; done' sh {} +)
    dirs=$(for e in $elves; do dirname "$e"; done | sort -u | sed 's/^/-l/')
    # shellcheck disable=SC2086
    (cd "$W/shlibs" && dpkg-shlibdeps --ignore-missing-info -O $dirs $elves 2>/dev/null) |
        sed -n 's/^shlibs:Depends=//p'
}

build() {	# PACKAGE PART ARCH
    pkg=$1 root=$W/$1 arch=$3
    sh "$TOP/packaging/install.sh" "$2" "$root"
    doc=$root/usr/share/doc/$pkg
    sed "s/@VERSION@/$VERSION/" "$HERE/changelog" | gzip -9n > "$doc/changelog.Debian.gz"
    chmod 0644 "$doc/changelog.Debian.gz"
    mkdir -m 0755 "$root/DEBIAN"
    (cd "$root" && find etc -type f 2>/dev/null | sed 's|^|/|' | sort) > "$root/DEBIAN/conffiles"
    [ -s "$root/DEBIAN/conffiles" ] || rm "$root/DEBIAN/conffiles"
    for s in preinst postinst prerm postrm; do    # packaging/scriptlets.sh's functions, called
        [ -f "$HERE/$pkg/$s" ] || continue
        { printf '#!/bin/sh\nset -e\n'; cat "$TOP/packaging/scriptlets.sh" "$HERE/$pkg/$s"; echo 'exit 0'; } \
            > "$root/DEBIAN/$s"
        chmod 0755 "$root/DEBIAN/$s"
    done
    size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
    sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" \
        -e "s/@SHLIBS@/$(shlibs "$root")/" \
        -e "s/@PYDEPENDS@/$PYDEPENDS/" \
        "$HERE/$pkg/control" > "$root/DEBIAN/control"
    (cd "$root" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | LC_ALL=C sort |
        xargs -d '\n' md5sum) > "$root/DEBIAN/md5sums"
    chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
    [ -f "$root/DEBIAN/conffiles" ] && chmod 0644 "$root/DEBIAN/conffiles"
    deb=$OUT/${pkg}_${VERSION}_$arch.deb
    comp=xz
    [ "$arch" = all ] || ! dpkg-deb --help 2>/dev/null | grep -q zstd || comp=zstd
    dpkg-deb --root-owner-group -Z"${DEB_COMPRESS:-$comp}" --build "$root" "$deb" >/dev/null
    echo "$deb"
}

for p in pcp-pmda-lustreclient:agent:$ARCH lustre-jobreport:node:all lustre-jobreport-admin:admin:$ARCH; do
    pkg=${p%%:*} rest=${p#*:}
    case " ${DEB_ONLY:-$pkg} " in *" $pkg "*) build "$pkg" "${rest%%:*}" "${rest#*:}" ;; esac
done
rm -rf "$W"
