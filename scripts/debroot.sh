#!/usr/bin/env bash
# Build a minimal Debian root of RELEASE (bullseye, bookworm, trixie) in DIR with the distribution's
# own Python and the libraries the node side uses (numpy, Jinja2, matplotlib, a TOML reader where
# Python has none, PCP and its Python bindings), for running the node side on that release.
#
#   scripts/debroot.sh RELEASE DIR [PACKAGE...]    e.g. scripts/debroot.sh bullseye /var/cache/roots/bullseye
#
# PACKAGEs: more of the release's packages to install in the root (the package matrix's build and
# test tools); they are part of the stamp.
#
# Idempotent and cacheable: a finished root carries a stamp naming what it was built with and is
# reused as it is; an unfinished one (DIR.part) is thrown away and built anew. The root is built in
# DIR.part and renamed only when complete, so DIR is either finished or absent.
# The mirror is the one this machine's apt uses (override with MIRROR=URL). Needs root and
# debootstrap (scripts/install-deps.sh debootstrap).
# Without systemd in the root, pcp's postinst cannot start services: as scripts/install-deps.sh
# does on the host, a no-op systemctl comes first on PATH, and policy-rc.d forbids starting any.
set -euo pipefail

usage() { echo "usage: $0 RELEASE DIR [PACKAGE...]" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
release=$1 dir=${2%/}
shift 2
extra=("$@")

# The TOML reader: Python 3.11 has tomllib; bullseye's 3.9 needs python3-toml.
pkgs=(python3 python3-numpy python3-jinja2 python3-matplotlib python3-pcp pcp)
case $release in
    bullseye) pkgs+=(python3-toml) ;;
    bookworm|trixie) ;;
    *) echo "debroot: unknown release $release (bullseye, bookworm or trixie)" >&2; exit 2 ;;
esac

host_mirror() {
    # The first Debian archive this machine's apt is set up with (deb822 or one-line format).
    grep -rhoE '(URIs:[[:space:]]*|^deb[[:space:]]+)https?://[^[:space:]]+/debian/?([[:space:]]|$)' \
        /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
        | grep -oE 'https?://[^[:space:]]+' | head -n1 || true
}
mirror=${MIRROR:-$(host_mirror)}
[[ -n $mirror ]] || { echo "debroot: no Debian mirror in /etc/apt: set MIRROR=URL" >&2; exit 1; }

# one builder of a root at a time; a second waits, then finds it built
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9

stamp="$release ${pkgs[*]}${extra[*]:+ + ${extra[*]}}"
if [[ -f $dir/.debroot-stamp && $(cat "$dir/.debroot-stamp") == "$stamp" ]]; then
    exit 0
fi
if [[ -f $dir/.debroot-stamp ]]; then
    # a root this script built for another release or other packages: built anew
    echo "debroot: $dir was built for: $(cat "$dir/.debroot-stamp"); rebuilding it"
    rm -rf "$dir"
fi
[[ -e $dir ]] && { echo "debroot: $dir exists but is not a root this script built" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "debroot: run as root (debootstrap and chroot need it)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "debroot: debootstrap missing (scripts/install-deps.sh debootstrap)" >&2; exit 1; }

part=$dir.part
rm -rf "$part"
mkdir -p "$(dirname "$dir")"

echo "debroot: debootstrap $release from $mirror into $part"
# The Python libraries come in with debootstrap (fast, no chroot apt); pcp needs its postinst
# run with the shims below, so it goes in with apt inside the root.
python_pkgs=$(IFS=,; echo "${pkgs[*]}" | sed 's/,python3-pcp//; s/,pcp//')
debootstrap --variant=minbase --include="$python_pkgs" "$release" "$part" "$mirror" >"$part.log" 2>&1 \
    || { echo "debroot: debootstrap failed, see $part.log" >&2; exit 1; }

# minbase writes no /etc/hosts: without one, "localhost" does not resolve in the root
[[ -e $part/etc/hosts ]] || printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$part/etc/hosts"
printf '#!/bin/sh\nexit 101\n' >"$part/usr/sbin/policy-rc.d"
chmod +x "$part/usr/sbin/policy-rc.d"
mkdir -p "$part/opt/debroot-shim"
ln -sf /bin/true "$part/opt/debroot-shim/systemctl"

in_root() {
    chroot "$part" /usr/bin/env -i PATH=/opt/debroot-shim:/usr/sbin:/usr/bin:/sbin:/bin \
        DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"
}
mount -t proc proc "$part/proc"
trap 'umount "$part/proc" 2>/dev/null || true' EXIT
in_root apt-get install -y -q --no-install-recommends python3-pcp pcp "${extra[@]}" >>"$part.log" 2>&1 || true
in_root dpkg --configure -a >>"$part.log" 2>&1 \
    || { echo "debroot: packages failed to configure, see $part.log" >&2; exit 1; }
for p in "${pkgs[@]}" "${extra[@]}"; do
    st=$(in_root dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
    [[ $st == ii* ]] || { echo "debroot: $p not installed in $part, see $part.log" >&2; exit 1; }
done
in_root apt-get clean
umount "$part/proc"
trap - EXIT

echo "$stamp" >"$part/.debroot-stamp"
mv "$part.log" "$part/debroot.log"
mv "$part" "$dir"
echo "debroot: $dir ready"
