"""Environment-variable overrides.

``SHOP_DB__HOST=db1`` sets ``config["db"]["host"] = "db1"``: the name after the prefix is
lower-cased and split on double underscores. Values ``true``/``false`` become booleans and
digit strings become ints. A value starting with ``+`` appends the rest to a list
(``SHOP_LOGGING__HANDLERS=+file``).
"""


def _convert(raw):
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if raw.isdigit():
        return int(raw)
    return raw


def apply_env(config, environ, prefix="SHOP_"):
    """Apply the variables in ``environ`` that start with ``prefix`` to ``config``, in place.

    Variables are applied in name order. Returns ``config``.
    """
    for name in sorted(environ):
        if not name.startswith(prefix):
            continue
        path = name[len(prefix):].lower().split("__")
        node = config
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ValueError(f"{name}: {part!r} is not a section")
        raw = environ[name]
        if raw.startswith("+"):
            node.setdefault(path[-1], []).append(_convert(raw[1:]))
        else:
            node[path[-1]] = _convert(raw)
    return config
