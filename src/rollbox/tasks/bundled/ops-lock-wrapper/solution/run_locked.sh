#!/usr/bin/env bash
# run_locked.sh LOCKDIR -- COMMAND [ARG...]
#
# Run COMMAND with its arguments (passed through unchanged) while holding the lock
# LOCKDIR, so that two cron jobs never run at the same time.
#
#  * The lock is taken by creating the directory LOCKDIR; the wrapper writes its PID
#    to LOCKDIR/pid.
#  * If LOCKDIR already exists, print "run_locked: LOCKDIR is held" on stderr and exit
#    75 without running COMMAND (and without touching the existing lock).
#  * The lock (LOCKDIR and everything in it) is always released when the wrapper
#    ends: after COMMAND succeeded, after it failed, and when the wrapper receives
#    SIGTERM or SIGINT.
#  * The exit status is COMMAND's exit status; after SIGTERM/SIGINT it is 128 + the
#    signal number (143 / 130).

lock=$1
shift
[ "${1-}" = "--" ] && shift

if ! mkdir -- "$lock" 2>/dev/null; then
    echo "run_locked: $lock is held" >&2
    exit 75
fi

release() { rm -rf -- "$lock"; }
trap release EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

echo $$ > "$lock/pid"

status=0
"$@" || status=$?
exit "$status"
