#!/usr/bin/env bash
# build_bundle.sh - build the release bundle dist/<name>.tar.gz.
# The layout is documented in README.md ("Release bundle").
set -euo pipefail

. ./bundle.conf

stage=build/$name
rm -rf -- build
mkdir -p -- "$stage/bin" "$stage/lib/$package" "$stage/etc" "$stage/share/doc" dist

cp -- src/main.py "$stage/bin/$name"
chmod 0755 "$stage/bin/$name"

# *.py files of the package, without __pycache__/ and tests/ directories
(cd src && find "$package" \( -name __pycache__ -o -name tests \) -prune \
    -o -type f -name '*.py' -print) |
while IFS= read -r f; do
    mkdir -p -- "$stage/lib/$(dirname -- "$f")"
    cp -- "src/$f" "$stage/lib/$f"
done

cp -- conf/agent.ini.example "$stage/etc/agent.ini"
cp -- README.md "$stage/share/doc/README.md"

(
    cd -- "$stage"
    find . -type f | sed 's|^\./||' | LC_ALL=C sort |
    while IFS= read -r f; do
        sha256sum -- "$f"
    done
) > build/MANIFEST.tmp
mv build/MANIFEST.tmp "$stage/MANIFEST.sha256"

tar --sort=name --format=gnu --mtime='@0' --owner=0 --group=0 --numeric-owner \
    --mode='a=rX,u+w' -C build -cf - "$name" | gzip -n -9 > "dist/$name.tar.gz"
echo "built dist/$name.tar.gz"
