#!/usr/bin/env bash
# health_report.sh [-v] STATUS_DIR
#
# Summarise the health-check dumps in STATUS_DIR. Every SERVICE.status file holds
# one check per line:   check=NAME result=ok|warn|fail [key=value ...]
# Blank lines and lines starting with '#' are ignored.
#
# Output: one line per service (sorted by name), then a total line:
#   service=SERVICE status=OK|WARN|FAIL failed=N warn=N first=FIRST_FAILED_CHECK|-
#   total failed=N warn=N services=N
# Exit status: 0 when no check failed, 1 when at least one failed, 2 on usage errors.
# -v additionally traces progress on stderr.
set -euo pipefail

verbose=0
if [ "${1:-}" = "-v" ]; then
    verbose=1
    shift
fi
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
    echo "usage: health_report.sh [-v] STATUS_DIR" >&2
    exit 2
fi
dir=$1

log() {
    [ "$verbose" -eq 1 ] && echo "# $*" >&2
}

total_fail=0
total_warn=0
services=0
for f in "$dir"/*.status; do
    svc=$(basename "$f" .status)
    log "reading $f"
    fails=$(grep -c 'result=fail' "$f")
    warns=$(grep -c 'result=warn' "$f")
    first=$(grep 'result=fail' "$f" | head -n 1 | sed 's/^check=\([^ ]*\).*/\1/')
    if [ "$fails" -gt 0 ]; then
        status=FAIL
    elif [ "$warns" -gt 0 ]; then
        status=WARN
    else
        status=OK
    fi
    echo "service=$svc status=$status failed=$fails warn=$warns first=${first:--}"
    ((total_fail += fails))
    ((total_warn += warns))
    ((services++))
done

log "done"
echo "total failed=$total_fail warn=$total_warn services=$services"
[ "$total_fail" -eq 0 ]
