#!/usr/bin/env bash
# build_bundle.sh - build the release bundle dist/<name>.tar.gz.
# The layout is documented in README.md ("Release bundle").
set -eu

. ./bundle.conf

stage=build/$name
mkdir -p $stage/bin $stage/lib $stage/etc $stage/share/doc dist

cp src/main.py $stage/bin/$name
cp -r src/$package $stage/lib/
cp conf/agent.ini.example $stage/etc/
cp README.md $stage/share/doc/

(cd $stage && find . -type f | xargs sha256sum > MANIFEST.sha256)

tar -czf dist/$name.tar.gz -C $stage .
echo "built dist/$name.tar.gz"
