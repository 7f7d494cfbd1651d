"""Semantic Versioning 2.0.0: parsing, ordering and simple constraints."""

from semver.compare import compare, latest, sort_versions
from semver.constraints import satisfies
from semver.version import Version, parse

__all__ = ["Version", "compare", "latest", "parse", "satisfies", "sort_versions"]
