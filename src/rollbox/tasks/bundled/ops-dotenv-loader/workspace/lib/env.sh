# lib/env.sh - source this file, then call:  load_env FILE
#
# Loads a dotenv file and exports every variable it defines into the caller's
# shell. Returns 0 on success, 1 (with a message on stderr naming FILE and the
# line number) if FILE cannot be read or contains an invalid line.

load_env() {
    local file=$1 line key value n=0
    [ -r "$file" ] || { echo "load_env: $file: cannot read" >&2; return 1; }
    while read line; do
        n=$((n + 1))
        [[ -z $line || $line == \#* ]] && continue
        line=${line#export }
        key=${line%%=*}
        value=${line#*=}
        value=${value%%#*}
        value=$(echo $value | sed -e 's/^"//' -e 's/"$//' -e "s/^'//" -e "s/'\$//")
        eval "export $key=\"$value\""
    done < "$file"
}
