"""Precedence of versions (SemVer 2.0.0, section 11). Build metadata is ignored."""

from semver.version import parse


def _key(version):
    v = parse(version)
    # A release sorts after all of its pre-releases.
    if not v.prerelease:
        return (v.major, v.minor, v.patch, 1, ())
    return (v.major, v.minor, v.patch, 0, v.prerelease)


def compare(a, b):
    """-1, 0 or 1 as ``a`` has lower, equal or higher precedence than ``b``."""
    ka, kb = _key(a), _key(b)
    return (ka > kb) - (ka < kb)


def sort_versions(versions):
    """The versions (strings or Version objects) sorted from lowest to highest precedence.

    The sort is stable: versions of equal precedence keep their input order.
    """
    return sorted(versions, key=_key)


def latest(versions, include_prereleases=False):
    """The highest version, skipping pre-releases unless asked; None if there is none."""
    candidates = [v for v in versions if include_prereleases or not parse(v).prerelease]
    return max(candidates, key=_key) if candidates else None
