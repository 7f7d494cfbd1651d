#!/usr/bin/env bash
# Hidden check for tail_errors.sh option parsing.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
log="$tmp/service.log"
for i in $(seq 1 40); do
    if [ $((i % 3)) -eq 0 ]; then echo "line $i ERROR code=$i"; else echo "line $i INFO all good"; fi
done > "$log"
# errors are on lines 3,6,...,39 (13 of them)
want() { for i in "$@"; do echo "line $i ERROR code=$i"; done; }

got=$(bash tail_errors.sh -n 3 "$log" 2>/dev/null) || fail "-n 3 exited non-zero"
[ "$got" = "$(want 33 36 39)" ] || fail "-n 3 printed: $got"

got=$(bash tail_errors.sh "$log" 2>/dev/null) || fail "default run exited non-zero"
[ "$got" = "$(want 27 30 33 36 39)" ] || fail "default run printed: $got"

bash tail_errors.sh -v -n 2 -o "$tmp/out.txt" "$log" 2>"$tmp/err" >"$tmp/stdout" || fail "-v -n 2 -o exited non-zero"
[ "$(cat "$tmp/out.txt")" = "$(want 36 39)" ] || fail "-o file holds: $(cat "$tmp/out.txt")"
[ ! -s "$tmp/stdout" ] || fail "with -o nothing may go to stdout"
grep -q "13 error line(s)" "$tmp/err" || fail "-v summary missing: $(cat "$tmp/err")"

got=$(bash tail_errors.sh -n12 -v "$log" 2>/dev/null) || fail "-n12 exited non-zero"
[ "$(printf '%s\n' "$got" | wc -l)" -eq 12 ] || fail "-n12 printed $(printf '%s\n' "$got" | wc -l) lines"

if bash tail_errors.sh -n 2>/dev/null; then fail "-n without a value must fail"; fi
if bash tail_errors.sh -x "$log" >/dev/null 2>&1; then fail "unknown option must fail"; fi
echo OK
