"""Parsing version strings."""

import re
from dataclasses import dataclass

_VERSION = re.compile(
    r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    prerelease: tuple = ()  # identifiers as strings, e.g. ("rc", "1")
    build: tuple = ()

    def __str__(self):
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(self.prerelease)
        if self.build:
            text += "+" + ".".join(self.build)
        return text


def parse(text):
    """Parse ``text`` (an optional leading ``v`` is allowed) into a Version."""
    if isinstance(text, Version):
        return text
    m = _VERSION.match(text.strip())
    if not m:
        raise ValueError(f"invalid version: {text!r}")
    major, minor, patch, pre, build = m.groups()
    pre_ids = tuple(pre.split(".")) if pre else ()
    for ident in pre_ids:
        if ident.isdigit() and len(ident) > 1 and ident.startswith("0"):
            raise ValueError(f"numeric identifier with leading zero in {text!r}")
    return Version(int(major), int(minor), int(patch), pre_ids,
                   tuple(build.split(".")) if build else ())
