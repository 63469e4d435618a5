#!/usr/bin/env bash
# Install the Debian packages lustre-jobreport needs to build, run and test, when missing.
# Idempotent: with everything present it only runs dpkg-query and exits.
# Works on a Debian 12 machine without systemd as PID 1 (see shared notes/pcp.md): the pcp
# postinst calls systemctl, so it is configured with a no-op systemctl first on PATH.
set -euo pipefail

PKGS=(pcp libpcp-pmda3-dev libpcp3-dev python3-pcp python3-venv gcc make pkg-config)
PKGS+=("$@")

missing=()
for p in "${PKGS[@]}"; do
    st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
    [[ $st == ii* ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: missing Debian packages: ${missing[*]} (run as root, or apt-get install them)" >&2
    exit 1
fi

shim=$(mktemp -d)
trap 'rm -rf "$shim"' EXIT
ln -s /bin/true "$shim/systemctl"
export PATH="$shim:$PATH" DEBIAN_FRONTEND=noninteractive

echo "install-deps: installing ${missing[*]}"
# A half-configured pcp from an earlier run blocks every later apt-get: finish it first.
dpkg --configure -a >/dev/null 2>&1 || true
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || true
dpkg --configure -a
for p in "${missing[@]}"; do
    st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
    [[ $st == ii* ]] || { echo "install-deps: $p failed to install" >&2; exit 1; }
done
