# lib/env.sh - source this file, then call:  load_env FILE
#
# Loads a dotenv file and exports every variable it defines into the caller's
# shell. Returns 0 on success, 1 (with a message on stderr naming FILE and the
# line number) if FILE cannot be read or contains an invalid line.

load_env() {
    local __le_file=$1 __le_line __le_key __le_val __le_rest __le_out __le_c __le_n=0 __le_i
    if [ ! -r "$__le_file" ]; then
        echo "load_env: $__le_file: cannot read" >&2
        return 1
    fi
    while IFS= read -r __le_line || [ -n "$__le_line" ]; do
        __le_n=$((__le_n + 1))
        __le_line=${__le_line%$'\r'}
        # strip surrounding whitespace
        __le_line=${__le_line#"${__le_line%%[![:space:]]*}"}
        __le_line=${__le_line%"${__le_line##*[![:space:]]}"}
        [[ -z $__le_line || $__le_line == \#* ]] && continue
        if [[ $__le_line =~ ^export[[:space:]]+(.*)$ ]]; then
            __le_line=${BASH_REMATCH[1]}
        fi
        if [[ ! $__le_line =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]]; then
            echo "load_env: $__le_file:$__le_n: invalid line" >&2
            return 1
        fi
        __le_key=${BASH_REMATCH[1]}
        __le_val=${BASH_REMATCH[2]}
        __le_val=${__le_val#"${__le_val%%[![:space:]]*}"}
        __le_rest=""
        if [[ $__le_val == \'* ]]; then
            if [[ ! $__le_val =~ ^\'([^\']*)\'(.*)$ ]]; then
                echo "load_env: $__le_file:$__le_n: invalid line" >&2
                return 1
            fi
            __le_val=${BASH_REMATCH[1]}
            __le_rest=${BASH_REMATCH[2]}
        elif [[ $__le_val == \"* ]]; then
            __le_out=""
            __le_i=1
            while :; do
                if (( __le_i >= ${#__le_val} )); then
                    echo "load_env: $__le_file:$__le_n: invalid line" >&2
                    return 1
                fi
                __le_c=${__le_val:__le_i:1}
                if [[ $__le_c == '"' ]]; then
                    break
                elif [[ $__le_c == '\' && $((__le_i + 1)) -lt ${#__le_val} ]]; then
                    __le_c=${__le_val:__le_i+1:1}
                    case $__le_c in
                        n) __le_out+=$'\n' ;;
                        '"' | '\') __le_out+=$__le_c ;;
                        *) __le_out+="\\$__le_c" ;;
                    esac
                    __le_i=$((__le_i + 2))
                    continue
                fi
                __le_out+=$__le_c
                __le_i=$((__le_i + 1))
            done
            __le_rest=${__le_val:__le_i+1}
            __le_val=$__le_out
        else
            # unquoted: an inline comment starts at whitespace followed by '#'
            if [[ $__le_val =~ ^(.*[^[:space:]])?[[:space:]]+#.*$ ]]; then
                __le_val=${BASH_REMATCH[1]}
            fi
            __le_val=${__le_val%"${__le_val##*[![:space:]]}"}
        fi
        # after a closing quote only whitespace and a comment may follow
        if [[ -n $__le_rest && ! $__le_rest =~ ^[[:space:]]*(#.*)?$ ]]; then
            echo "load_env: $__le_file:$__le_n: invalid line" >&2
            return 1
        fi
        printf -v "$__le_key" '%s' "$__le_val"
        export "$__le_key"
    done < "$__le_file"
    return 0
}
