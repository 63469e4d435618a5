# Shell helpers shared by the run-*.sh tests (sourced).

# agent_out NAME: HERE (the pmda-lustre directory, the current one), AGENT
# (default: the agent built here; e.g. a sanitizer build) and OUT =
# tests/out/NAME[-$AGENT_TAG], emptied
agent_out() {
    HERE=$(pwd)
    AGENT=${AGENT:-$HERE/pmdalustreclient}
    OUT=$HERE/tests/out/$1${AGENT_TAG:+-$AGENT_TAG}
    rm -rf "$OUT"
    mkdir -p "$OUT"
}

# stop_pid PID: TERM, up to 5 s for it to go, then KILL; reaps it if it is our child.
# Liveness comes from ps, not kill -0: the reaper here leaves orphans as zombies.
stop_pid() {
    [ -n "$1" ] || return 0
    kill "$1" 2>/dev/null
    _i=0
    while [ $_i -lt 50 ]; do
	_st=$(ps -o stat= -p "$1" 2>/dev/null)
	case "$_st" in ""|Z*) break ;; esac
	sleep 0.1; _i=$((_i + 1))
    done
    case "$_st" in ""|Z*) ;; *) kill -9 "$1" 2>/dev/null ;; esac
    wait "$1" 2>/dev/null
    return 0
}
