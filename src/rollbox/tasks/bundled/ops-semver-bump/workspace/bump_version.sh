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
set -eu

part=$1
date=$2

old=$(cat VERSION)
IFS=. read -r major minor patch < VERSION

case $part in
    major) new="$((major + 1)).0.0" ;;
    minor) new="$major.$((minor + 1)).$patch" ;;
    patch) new="$major.$minor.$((patch + 1))" ;;
esac

echo "$new" > VERSION
sed -i "s/$old/$new/g" setup.cfg
sed -i "s/$old/$new/g" src/*/__init__.py
sed -i "s/## \[Unreleased\]/## [$new] - $date/" CHANGELOG.md

echo "$old -> $new"
