#!/usr/bin/env bash
# bump_version.sh PART DATE
#
# Bump the project version. PART is major, minor or patch; DATE (YYYY-MM-DD) is the
# release date written to the changelog. Run from the project root.
#
# The current version is the content of VERSION: MAJOR.MINOR.PATCH with an optional
# pre-release suffix "-LABEL" (LABEL: letters, digits, dots and dashes), e.g.
# 2.0.0-rc.1. The new version follows semver:
#   patch: X.Y.Z -> X.Y.(Z+1);        X.Y.Z-pre -> X.Y.Z
#   minor: X.Y.Z -> X.(Y+1).0;        X.Y.0-pre -> X.Y.0      (X.Y.Z-pre, Z>0 -> X.(Y+1).0)
#   major: X.Y.Z -> (X+1).0.0;        X.0.0-pre -> X.0.0      (otherwise -> (X+1).0.0)
#
# Files updated (nothing else in them changes):
#   VERSION                 the new version
#   setup.cfg               the "version = ..." line of the [metadata] section only
#   src/*/__init__.py       the line  __version__ = "OLD"  only
#   CHANGELOG.md            right after the "## [Unreleased]" line, insert an empty line
#                           and "## [NEW] - DATE" (the unreleased entries end up under
#                           the new heading, the Unreleased heading stays on top)
#
# Before changing anything, the script checks that PART and DATE are valid (else exit
# 2), that VERSION is a valid version, that setup.cfg [metadata] and every __version__
# line hold exactly that version, and that CHANGELOG.md has exactly one
# "## [Unreleased]" line (else exit 1). If any check fails, no file is modified.
# On success it prints "OLD -> NEW".
set -euo pipefail
shopt -s nullglob

usage() {
    echo "usage: bump_version.sh major|minor|patch YYYY-MM-DD" >&2
    exit 2
}
die() {
    echo "bump_version: $*" >&2
    exit 1
}

[ $# -eq 2 ] || usage
part=$1
date=$2
case $part in
    major | minor | patch) ;;
    *) usage ;;
esac
[[ $date =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] || usage

# --- current version
[ -f VERSION ] || die "VERSION not found"
old=$(<VERSION)
re='^([0-9]+)\.([0-9]+)\.([0-9]+)(-([0-9A-Za-z.-]+))?$'
[[ $old =~ $re ]] || die "VERSION: '$old' is not a valid version"
major=$((10#${BASH_REMATCH[1]}))
minor=$((10#${BASH_REMATCH[2]}))
patch=$((10#${BASH_REMATCH[3]}))
pre=${BASH_REMATCH[5]}

case $part in
    patch)
        if [ -n "$pre" ]; then new="$major.$minor.$patch"; else new="$major.$minor.$((patch + 1))"; fi ;;
    minor)
        if [ -n "$pre" ] && [ "$patch" -eq 0 ]; then new="$major.$minor.0"; else new="$major.$((minor + 1)).0"; fi ;;
    major)
        if [ -n "$pre" ] && [ "$minor" -eq 0 ] && [ "$patch" -eq 0 ]; then
            new="$major.0.0"
        else
            new="$((major + 1)).0.0"
        fi ;;
esac

# --- consistency checks (nothing is modified before all of them passed)
meta_version() {
    awk '
        /^[ \t]*\[/ { sec = $0; gsub(/^[ \t]*\[|\][ \t]*$/, "", sec); next }
        sec == "metadata" && /^[ \t]*version[ \t]*=/ {
            v = $0; sub(/^[^=]*=[ \t]*/, "", v); sub(/[ \t]+$/, "", v); print v
        }' setup.cfg
}
[ -f setup.cfg ] || die "setup.cfg not found"
[ "$(meta_version)" = "$old" ] || die "setup.cfg: [metadata] version is not $old"

inits=(src/*/__init__.py)
for f in "${inits[@]}"; do
    while IFS= read -r line; do
        [ "$line" = "__version__ = \"$old\"" ] || die "$f: '$line' does not match VERSION $old"
    done < <(grep '^__version__' "$f" || true)
done

[ -f CHANGELOG.md ] || die "CHANGELOG.md not found"
n=$(grep -cx '## \[Unreleased\]' CHANGELOG.md || true)
[ "$n" -eq 1 ] || die "CHANGELOG.md: expected exactly one '## [Unreleased]' line, found $n"

# --- write everything to temporary files, then move them into place
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "$new" > "$tmp/VERSION"
awk -v new="$new" '
    /^[ \t]*\[/ { sec = $0; gsub(/^[ \t]*\[|\][ \t]*$/, "", sec) }
    sec == "metadata" && /^[ \t]*version[ \t]*=/ { print "version = " new; next }
    { print }' setup.cfg > "$tmp/setup.cfg"
i=0
for f in "${inits[@]}"; do
    awk -v old="__version__ = \"$old\"" -v new="__version__ = \"$new\"" '
        $0 == old { print new; next }
        { print }' "$f" > "$tmp/init.$i"
    i=$((i + 1))
done
awk -v head="## [$new] - $date" '
    { print }
    $0 == "## [Unreleased]" { print ""; print head }' CHANGELOG.md > "$tmp/CHANGELOG.md"

cat "$tmp/VERSION" > VERSION
cat "$tmp/setup.cfg" > setup.cfg
i=0
for f in "${inits[@]}"; do
    cat "$tmp/init.$i" > "$f"
    i=$((i + 1))
done
cat "$tmp/CHANGELOG.md" > CHANGELOG.md

echo "$old -> $new"
