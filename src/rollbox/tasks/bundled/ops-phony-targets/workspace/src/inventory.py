"""Tiny host inventory helpers."""


def parse_line(line):
    """Parse 'name role [tag ...]' into a dict; blank lines and comments give None."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    name, role, *tags = line.split()
    return {"name": name, "role": role, "tags": sorted(tags)}


def by_role(lines):
    """Group host names by role, each group sorted."""
    groups = {}
    for line in lines:
        host = parse_line(line)
        if host is not None:
            groups.setdefault(host["role"], []).append(host["name"])
    return {role: sorted(names) for role, names in sorted(groups.items())}
