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

mkdir "$prefix" "$prefix/releases" "$prefix/shared" "$prefix/shared/config" \
    "$prefix/shared/log" "$prefix/bin" "$prefix/etc"

cp -r "$here/payload" "$prefix/releases/$release"
echo "$release" > "$prefix/releases/$release/VERSION"

ln -s "releases/$release" "$prefix/current"
ln -s ../current/bin/app "$prefix/bin/app"

cp "$here/config/app.conf.default" "$prefix/shared/config/app.conf"
echo "export PATH=\"$prefix/bin:\$PATH\"" >> "$prefix/etc/profile"
echo "$release" >> "$prefix/releases.txt"

echo "setup: release $release active in $prefix"
