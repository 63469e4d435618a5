# lustre-jobreport: what the six hook wrappers share (hooks/README.md). Installed as
# /usr/share/lustre-jobreport/hooks/lib.sh (not executable); hooks/slurm/prolog, slurm/epilog,
# pbs/prologue, pbs/epilogue, pbs/execjob_begin and pbs/prologue.parallel source it in a
# subshell, after /etc/default/lustre-jobreport, with fd 3 on their own standard output and 1
# and 2 on /dev/null. They set
#   kind   prolog | epilog        the reporter's subcommand; [hooks] <kind>_timeout_s
#   sched  slurm | pbs | pbs-hook (PBS's execjob_begin hook, on every host)
#          | torque-sister        (Torque's prologue.parallel, on every sister host)
#   tojob  yes: the reporter's standard output is the job's output (the PBS epilogue's)
#   job    the job id, for log lines
# and keep the scheduler's arguments (PBS) as "$@". Nothing job-controlled is evaluated here.
# Guarantees: the reporter ends within the bound; its stderr and every problem go to one log
# line, never to the job; the wrapper exits 0 whatever happens here.

cfg=$LUSTRE_JOBREPORT_CONFIG
# the default place need not exist (the reporter then has its built-in defaults); a config named
# elsewhere must
[ "$cfg" = /etc/lustre-jobreport/config.toml ] && cfg=
fallback=${LUSTRE_JOBREPORT_LOG:-syslog}        # where to log if the config cannot be read
[ "$tojob" = yes ] || exec 3>/dev/null

# The bound and the log are the config's as the reporter's hooks read it (every TOML form; a bad
# value is its default): the reporter says them, "limits: TERM KILL BOUND LOG", as the first line
# of its standard error, i.e. SIGTERM after TERM s, SIGKILL KILL s later, at BOUND. Until it has,
# the built-in bound (config.py's) and LUSTRE_JOBREPORT_LOG hold; a reporter run under another
# bound than the config's does nothing and exits 75, and runs again under the config's.
limits() {
    case $1 in
    [0-9]*' '[0-9]*' '[0-9]*' '/*|[0-9]*' '[0-9]*' '[0-9]*' 'syslog) ;;
    *) return 1 ;;
    esac
    set -- "$1"
    term=${1%% *}; set -- "${1#* }"
    kill=${1%% *}; set -- "${1#* }"
    bound=${1%% *}; logto=${1#* }
}
case $kind in prolog) lim='4.5 0.5 5 ' ;; epilog) lim='29.5 0.5 30 ' ;; esac
limits "$lim$fallback" || limits "${lim}syslog"
nl='
'
# the reporter's stderr is captured for the log (never the job's), the shell's own kept out; its
# first line, the limits, is taken out of it
run() {
    err=$( { timeout -k "$kill" "$term" "$LUSTRE_JOBREPORT" ${cfg:+--config "$cfg"} "$kind" \
        --scheduler "$sched" --log "$fallback" --bound "$bound" -- "$@" </dev/null 2>&1 >&3 3>&-; } 2>/dev/null)
    rc=$?
    said=${err%%"$nl"*}
    case $said in
    'limits: '*) limits "${said#limits: }" && heard=yes
        err=${err#"$said"}; err=${err#"$nl"} ;;
    esac
}
heard=no
run "$@"
[ "$rc" -eq 75 ] && [ "$heard" = yes ] && run "$@"
note=
[ "$heard" = yes ] || note="bound and log not read from the config: built-in ones used"
if [ "$rc" -ne 0 ] || [ -n "$err" ]; then
    case $rc in
    0) why= ;;
    124|137) why="killed at the $bound s bound ([hooks] ${kind}_timeout_s)" ;;
    126|127) why="cannot run $LUSTRE_JOBREPORT (exit $rc)" note= ;;
    *) if [ "$rc" -gt 128 ]; then why="died of signal $((rc - 128))"; else why="exit $rc"; fi ;;
    esac
    # the last line the reporter said (not dash's own "Segmentation fault" note about it)
    last=$(printf '%s\n' "$err" | sed -E '/^[[:space:]]*$/d; /^(Segmentation fault|Killed|Aborted|Terminated|Bus error|Illegal instruction|Floating point exception)( \(core dumped\))?$/d' | tail -n 1 | cut -c1-400)
    msg=$why${why:+${last:+: }}$last
    msg="error: $sched $kind job ${job:-?}: $msg${msg:+${note:+; }}$note"
    # not the reporter's own words (an interpreter's or a library's, those are escaped): a control
    # character (C0, DEL, or C1 as UTF-8) is shown as '?', never obeyed by an admin's terminal
    msg=$(printf '%s\n' "$msg" | LC_ALL=C sed -e 's/[[:cntrl:]]/?/g' -e 's/\xc2[\x80-\x9f]/?/g')
    case $logto in
    /*) printf '%s %s lustre-jobreport[%s]: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
            "$(uname -n | cut -d. -f1)" "$$" "$msg" >>"$logto" ;;
    *) logger -t lustre-jobreport -p daemon.err -- "$msg" ;;
    esac
fi
exit 0
