# What the packages do when installed, upgraded and removed: shell functions that both the
# Debian maintainer scripts (packaging/deb/<package>/<script>, which call them by dpkg's
# arguments) and the RPM scriptlets (packaging/rpm/*.spec.in, by rpm's counts)
# include, so the two formats do the same things. POSIX sh; nothing here fails the package
# operation.

# --- pcp-pmda-lustreclient --------------------------------------------------------------------
# As with PCP's own agents, installing the package does not add the agent to pmcd: the admin
# runs ./Install in /var/lib/pcp/pmdas/lustreclient (docs/admin.md).

agent_in_pmcd() {
    [ -f /etc/pcp.env ] && . /etc/pcp.env && grep -q '^lustreclient[[:space:]]' "$PCP_PMCDCONF_PATH" 2>/dev/null
}

# The system pmcd's own pmdalustreclient (other pmcds' are not touched): pmcd's pmdaroot forks
# the agents (PCP 4 and later), older pmcds fork them themselves. A process name is cut to 15
# characters.
agent_pids() {
    ps -e -o pid=,ppid=,comm= | awk -v top="$1" '{ parent[$1] = $2; name[$1] = $3 }
        END { for (p in name) if (name[p] == "pmdalustreclien" && (parent[p] == top || parent[parent[p]] == top)) print p }'
}

# Upgrade: pmcd restarts its agent with the new binary and the pmcd.conf line (and options)
# the admin's ./Install wrote (pmcd(1): stop the agent, then SIGHUP pmcd). The agent writes
# its running jobs as it leaves (SIGTERM) and the new one takes them up (design.md §2.4); their
# reports name the host as restarted.
agent_restart() {
    agent_in_pmcd || return 0
    # the pmcd that local clients reach, by its own metric (a pmcd run in the foreground
    # writes no pid file)
    pmcd=$(pmprobe -v -h local: pmcd.pid 2>/dev/null | awk '$1 == "pmcd.pid" && $2 == 1 { print $3 }')
    [ -n "$pmcd" ] || return 0
    old=$(agent_pids "$pmcd")
    [ -n "$old" ] || return 0
    kill $old 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        [ -z "$(agent_pids "$pmcd")" ] && break
        sleep 0.5
    done
    kill -HUP "$pmcd" 2>/dev/null || true
    echo "pcp-pmda-lustreclient: pmcd restarts the agent with the new binary"
}

# Removal (not an upgrade): the agent leaves pmcd first, as PCP's own agent packages do:
# ./Remove takes out its pmcd.conf line and PMNS entries and signals pmcd if it runs.
agent_remove() {
    agent_in_pmcd || return 0
    (cd /var/lib/pcp/pmdas/lustreclient && ./Remove </dev/null >/dev/null 2>&1) ||
        echo "pcp-pmda-lustreclient: ./Remove failed; take lustreclient out of $PCP_PMCDCONF_PATH by hand" >&2
}

# After removal: what the agent wrote while it ran, its instance caches (domain 220), the
# running jobs it kept (jobs/, design.md §2.4) and its logs in pmcd's log directory.
agent_purge() {
    rm -f /var/lib/pcp/config/pmda/220.[0-9]*
    rm -rf /var/lib/pcp/pmdas/lustreclient/jobs
    rm -f /var/log/pcp/pmcd/lustreclient.log /var/log/pcp/pmcd/lustreclient.log.prev
    rm -f /var/lib/pcp/pmdas/lustreclient/.NeedInstall
    rmdir /var/lib/pcp/pmdas/lustreclient 2>/dev/null || true
}

# --- lustre-jobreport, lustre-jobreport-admin -------------------------------------------------
# The spool and records directories, root's, in the modes the hooks check (tmpfiles.d). The
# nightly compaction timer is not enabled: it belongs on one admin node, not on every compute
# node that runs the hooks (docs/admin.md).
reporter_dirs() {
    if command -v systemd-tmpfiles >/dev/null 2>&1; then
        systemd-tmpfiles --create lustre-jobreport.conf || true
    else
        install -d -m 0700 /var/spool/lustre-jobreport
        install -d -m 0755 /var/lib/lustre-jobreport
        install -d -m 0750 /var/lib/lustre-jobreport/records /var/lib/lustre-jobreport/dataset
    fi
    systemd_reload
}

# The node package ships its code without bytecode, as Debian's Python packages do: it is
# compiled here for the python3 that runs it, so that the hooks, which run as root with
# bytecode writing off, start from it; removal takes it away with the code.
REPORTER_PYTHON_DIR=/usr/lib/lustre-jobreport/python
reporter_compile() {
    python3 -m compileall -q --invalidation-mode unchecked-hash "$REPORTER_PYTHON_DIR" >/dev/null 2>&1 ||
        echo "lustre-jobreport: could not compile $REPORTER_PYTHON_DIR (it runs, more slowly)" >&2
}
reporter_uncompile() {
    [ -d "$REPORTER_PYTHON_DIR" ] || return 0
    find "$REPORTER_PYTHON_DIR" -depth -type d -name __pycache__ -exec rm -rf {} + 2>/dev/null || true
}

# Removal of the admin package: the compaction timer stops, and is disabled if the admin
# enabled it.
reporter_timer_off() {
    command -v systemctl >/dev/null 2>&1 || return 0
    if [ -d /run/systemd/system ]; then
        systemctl stop lustre-jobreport-compact.timer lustre-jobreport-compact.service >/dev/null 2>&1 || true
    fi
    systemctl --no-reload disable lustre-jobreport-compact.timer >/dev/null 2>&1 || true
}

# After removal: the spool (begin snapshots of jobs, worthless without the package), and the
# records and dataset directories when empty. Job records and the dataset are the cluster's
# history that `compare` reads: kept, as a database package keeps its data, until the admin
# deletes /var/lib/lustre-jobreport.
reporter_purge() {
    rm -rf /var/spool/lustre-jobreport
    if [ -d /var/lib/lustre-jobreport ]; then
        find /var/lib/lustre-jobreport -depth -type d -empty -delete || true
    fi
}

systemd_reload() {
    if [ -d /run/systemd/system ]; then
        systemctl daemon-reload >/dev/null 2>&1 || true
    fi
}
