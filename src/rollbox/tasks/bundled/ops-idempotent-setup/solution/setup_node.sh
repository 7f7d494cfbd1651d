#!/usr/bin/env bash
# setup_node.sh PREFIX RELEASE
#
# Install payload/ as release RELEASE under PREFIX and make it the active one:
#
#   PREFIX/releases/RELEASE/    an exact copy of payload/, plus a VERSION file
#                               containing RELEASE
#   PREFIX/current              symlink -> releases/RELEASE   (relative)
#   PREFIX/bin/app              symlink -> ../current/bin/app (relative)
#   PREFIX/shared/config/app.conf   copied from config/app.conf.default, but only
#                               if it does not exist yet (admins edit it)
#   PREFIX/shared/log/          empty directory for the application's logs
#   PREFIX/etc/profile          must contain the line
#                                   export PATH="PREFIX/bin:$PATH"
#                               exactly once; other lines are left alone
#   PREFIX/releases.txt         every release ever installed, once each, in the
#                               order of their first installation
#
# The script must be idempotent: running it again with the same arguments changes
# nothing, and running it with another RELEASE only switches what must switch.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
prefix=$1
release=$2

mkdir -p "$prefix/releases" "$prefix/shared/config" "$prefix/shared/log" \
    "$prefix/bin" "$prefix/etc"

# (re)create the release directory as an exact copy of payload/
rm -rf -- "$prefix/releases/$release"
cp -R -- "$here/payload" "$prefix/releases/$release"
echo "$release" > "$prefix/releases/$release/VERSION"

# -n: replace the link itself, never create a link inside the directory it points to
ln -sfn "releases/$release" "$prefix/current"
ln -sfn ../current/bin/app "$prefix/bin/app"

if [ ! -e "$prefix/shared/config/app.conf" ]; then
    cp -- "$here/config/app.conf.default" "$prefix/shared/config/app.conf"
fi

path_line="export PATH=\"$prefix/bin:\$PATH\""
touch "$prefix/etc/profile" "$prefix/releases.txt"
grep -qxF -- "$path_line" "$prefix/etc/profile" || echo "$path_line" >> "$prefix/etc/profile"
grep -qxF -- "$release" "$prefix/releases.txt" || echo "$release" >> "$prefix/releases.txt"

echo "setup: release $release active in $prefix"
