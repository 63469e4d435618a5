#!/usr/bin/env bash
# The package matrix's Debian roots (tests/matrix): one minimal root per release, with the node
# side's libraries (scripts/debroot.sh) and what the matrix builds and runs in it: the agent's
# build, the .deb build, pytest, Slurm and munge, and the packages' dependencies, so that
# apt-get inside a root needs no network. Built in parallel, each once (debroot.sh's stamp), and
# kept in LJR_ROOTS for later runs.
#
#   scripts/matrix-roots.sh [RELEASE...]     default: bullseye bookworm trixie
#
# Prints each root's directory; exit status non-zero if any failed (its log is named).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
roots=${LJR_ROOTS:-/var/cache/lustre-jobreport/roots}
releases=("$@")
[[ ${#releases[@]} -gt 0 ]] || releases=(bullseye bookworm trixie)

common=(gcc make pkg-config libpcp-pmda3-dev libpcp3-dev dpkg-dev xz-utils python3-pytest python3-venv
        ca-certificates procps man-db slurmctld slurmd slurm-client munge python3-scipy)
extra_for() {	# python-hostlist where the release has it (the node package recommends it)
    case $1 in trixie) echo python3-hostlist ;; esac
}

mkdir -p "$roots"
pids=()
for r in "${releases[@]}"; do
    # shellcheck disable=SC2046
    "$here/debroot.sh" "$r" "$roots/$r" "${common[@]}" $(extra_for "$r") >"$roots/$r.out" 2>&1 &
    pids+=($!)
done
failed=0
for i in "${!releases[@]}"; do
    if wait "${pids[$i]}"; then
        echo "$roots/${releases[$i]}"
    else
        echo "matrix-roots: ${releases[$i]} failed, see $roots/${releases[$i]}.out" >&2
        failed=1
    fi
done
exit $failed
