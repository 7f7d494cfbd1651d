# rollbox sandbox agent: PID 1 of a sandbox, started by bwrap. It runs the host's requests and
# reports on them; everything a command starts is its descendant, so it shares the sandbox's
# namespaces, cgroup, dropped capabilities and no-new-privs.
#
# Requests arrive on fd $RB_REQ_FD, one line each:   run ID  |  kill ID  |  exit
# Events go to fd $RB_EVT_FD, one line each:         cpu ID USER SYS, done ID STATUS, killed ID
# Each request's supervisor holds ID.life open while it lives, so that the host sees it go even
# when a command kills it (`kill -9 -1`) before it could report.
# This bash runs from an execute-only copy of the binary, which makes the kernel mark it (and
# the supervisors it forks) non-dumpable: commands, which run as the same user, cannot ptrace
# them or open their file descriptors through /proc to forge events.
# A request's files are under $RB_CTL (read-only here): ID.req (cwd, limits, argc, then argv
# and env NUL-separated), ID.out and ID.err (FIFOs the host reads), ID.in (stdin, if any).
set -m                       # each request is a job with a process group of its own
exec {RB_INFO_FD}<&- {RB_BLOCK_FD}<&-
declare -A pgids=()

run() {
    local id=$1 f=$RB_CTL/$1 cwd cpu fsize nofile argc
    local -a all
    {
        read -r cwd
        read -r cpu fsize nofile
        read -r argc
        mapfile -d '' -t all
    } <"$f.req"
    local stdin=/dev/null
    [[ -e $f.in ]] && stdin=$f.in
    {
        exec {life}>"$f.life"
        (
            ulimit -t "$cpu"; ulimit -f "$fsize"; ulimit -n "$nofile"
            cd -- "$cwd" 2>/dev/null || { echo "rollbox: no such directory: $cwd" >&2; exit 126; }
            unset -v PATH SHLVL PWD OLDPWD RB_CTL RB_REQ_FD RB_EVT_FD RB_INFO_FD RB_BLOCK_FD
            export -- "${all[@]:argc}"     # exactly the environment the host asked for
            exec -- "${all[@]:0:argc}"
        ) <"$stdin" >"$f.out" 2>"$f.err" {RB_REQ_FD}<&- {RB_EVT_FD}>&- {life}>&- &
        TIMEFORMAT="cpu $id %3U %3S"
        { time wait $!; } 2>&"$RB_EVT_FD"
        echo "done $id $?" >&"$RB_EVT_FD"
    } {RB_REQ_FD}<&- &
    pgids[$id]=$!
}

echo "ready" >&"$RB_EVT_FD"  # the container is set up: create() returns only now
while read -r -u "$RB_REQ_FD" verb id; do
    case $verb in
        run) run "$id" ;;
        kill)
            [[ -n ${pgids[$id]} ]] && kill -KILL -- "-${pgids[$id]}" 2>/dev/null
            unset "pgids[$id]"
            echo "killed $id" >&"$RB_EVT_FD"
            ;;
        forget) unset "pgids[$id]" ;;
        exit) break ;;
    esac
done
