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

# free_port BASE: a TCP port free on 127.0.0.1 now (BASE plus a bit of the pid if
# python3 cannot say)
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' \
	2>/dev/null || echo $(($1 + $$ % 90))
}

# wait_pmcd PID SPEC DIR WHAT: until lustreclient.version answers at SPEC (10 s);
# else say so with DIR's pmcd.log and pmcd.out and exit 1
wait_pmcd() {
    _i=0
    until pminfo -h "$2" lustreclient.version > /dev/null 2>&1; do
	_i=$((_i + 1))
	case "$(ps -o stat= -p "$1" 2>/dev/null)" in ""|Z*) _i=999 ;; esac
	if [ $_i -gt 100 ]; then
	    echo "$4: pmcd did not start"; cat "$3/pmcd.log" "$3/pmcd.out" 2>/dev/null; exit 1
	fi
	sleep 0.1
    done
}

# golden TAG NAME FILE: FILE against tests/pmcd/NAME.out ("TAG NAME: ok" or FAILED with the
# diff, fail=1); UPDATE=1 rewrites the golden instead.  $W holds the diff.
golden() {
    if [ -n "$UPDATE" ]; then
	cp "$3" "tests/pmcd/$2.out"; echo "$1 $2: golden updated"
    elif diff -u "tests/pmcd/$2.out" "$3" > "$W/$2.diff"; then
	echo "$1 $2: ok"
    else
	echo "$1 $2: FAILED"; head -40 "$W/$2.diff"; fail=1
    fi
}
