#!/usr/bin/env bash
# tail_errors.sh [-n COUNT] [-o OUTFILE] [-v] LOGFILE
# Print the last COUNT (default 5) lines of LOGFILE that contain "ERROR",
# to OUTFILE if given, else to stdout. -v adds a summary line on stderr.
count=5
out=""
verbose=0
while getopts "o:n:v" opt; do
    case $opt in
        n) count=$OPTARG ;;
        o) out=$OPTARG ;;
        v) verbose=1 ;;
        *) echo "usage: tail_errors.sh [-n COUNT] [-o OUTFILE] [-v] LOGFILE" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: tail_errors.sh [-n COUNT] [-o OUTFILE] [-v] LOGFILE" >&2; exit 2; }
log=$1
if [ -n "$out" ]; then
    grep -F "ERROR" -- "$log" | tail -n "$count" > "$out"
else
    grep -F "ERROR" -- "$log" | tail -n "$count"
fi
[ "$verbose" -eq 0 ] || echo "tail_errors: $(grep -cF "ERROR" -- "$log") error line(s) in $log" >&2
exit 0
