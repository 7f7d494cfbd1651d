#!/usr/bin/env bash
# print_env.sh FILE KEY...   - load FILE with load_env and print KEY=<value> lines
set -u
. "$(dirname "$0")/lib/env.sh"
file=$1
shift
load_env "$file" || exit 1
for k in "$@"; do
    printf '%s=[%s]\n' "$k" "${!k-<unset>}"
done
