#!/usr/bin/env bash
# backup.sh SOURCE DEST
# Copy every regular file below SOURCE into DEST, keeping relative paths,
# skipping editor/temp files (*.tmp), and write DEST/MANIFEST: the relative
# path of every copied file, one per line, in byte order.
set -u

if [ $# -ne 2 ]; then
    echo "usage: backup.sh SOURCE DEST" >&2
    exit 2
fi
src=$1
dest=$2

if [ ! -d $src ]; then
    echo "backup: $src: not a directory" >&2
    exit 1
fi
mkdir -p $dest
dest=$(cd $dest && pwd)
manifest=$dest/MANIFEST

cd $src || exit 1
files=$(find . -type f ! -name '*.tmp' | sed 's|^\./||' | LC_ALL=C sort)

: > $manifest
for f in $files; do
    mkdir -p $dest/$(dirname $f)
    cp $f $dest/$f
    echo $f >> $manifest
done

echo "backup: $(wc -l < $manifest) file(s) copied to $dest"
