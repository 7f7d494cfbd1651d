#!/usr/bin/env bash
# rotate_logs.sh [-n] LOG_DIR TODAY
#
# Log files are named SERVICE-YYYY-MM-DD.log (SERVICE may itself contain '-'),
# rotated ones SERVICE-YYYY-MM-DD.log.gz. Only the date in the name counts, never
# the file's modification time. TODAY is given as YYYY-MM-DD; the age of a file is
# the number of days between its date and TODAY.
#
#  * a file older than RETAIN_DAYS days (default 14; a file exactly RETAIN_DAYS
#    days old is kept) is deleted, whether compressed or not ...
#  * ... except the MIN_KEEP newest files of each service (default 3), which are
#    never deleted, however old;
#  * every remaining .log file dated before TODAY is compressed with gzip;
#  * every other file in LOG_DIR is left alone.
#
# Actions are printed as "delete NAME" / "compress NAME": all deletes first, then
# all compresses, each group sorted by name (byte order). -n: print, change nothing.
set -euo pipefail

RETAIN_DAYS=${RETAIN_DAYS:-14}
MIN_KEEP=${MIN_KEEP:-3}

dry=0
if [ "${1:-}" = "-n" ]; then
    dry=1
    shift
fi
dir=$1
today=$2

days() { echo $(( $(date -u -d "$1" +%s) / 86400 )); }
today_d=$(days "$today")

cd -- "$dir"

# one "SERVICE|DATE|NAME" entry per rotatable file
entries=()
for f in *; do
    [ -f "$f" ] || continue
    if [[ $f =~ ^(.+)-([0-9]{4}-[0-9]{2}-[0-9]{2})\.log(\.gz)?$ ]]; then
        entries+=("${BASH_REMATCH[1]}|${BASH_REMATCH[2]}|$f")
    fi
done

deletes=()
compresses=()
prev=""
n=0
# newest first within each service
while IFS='|' read -r svc d f; do
    [ -n "$f" ] || continue
    if [ "$svc" != "$prev" ]; then
        prev=$svc
        n=0
    fi
    n=$((n + 1))
    age=$(( today_d - $(days "$d") ))
    if [ "$n" -gt "$MIN_KEEP" ] && [ "$age" -gt "$RETAIN_DAYS" ]; then
        deletes+=("$f")
    elif [[ $f == *.log ]] && [ "$age" -gt 0 ]; then
        compresses+=("$f")
    fi
done < <(printf '%s\n' "${entries[@]+"${entries[@]}"}" | LC_ALL=C sort -t'|' -k1,1 -k2,2r)

while IFS= read -r f; do
    [ -n "$f" ] || continue
    echo "delete $f"
    [ "$dry" -eq 1 ] || rm -f -- "$f"
done < <(printf '%s\n' "${deletes[@]+"${deletes[@]}"}" | LC_ALL=C sort)
while IFS= read -r f; do
    [ -n "$f" ] || continue
    echo "compress $f"
    [ "$dry" -eq 1 ] || gzip -- "$f"
done < <(printf '%s\n' "${compresses[@]+"${compresses[@]}"}" | LC_ALL=C sort)
