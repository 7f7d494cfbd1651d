"""Merging nested configuration dicts."""

import copy


def deep_merge(base, override):
    """Return a new dict: ``base`` with ``override`` merged into it.

    Nested dicts are merged key by key. Any other value in ``override`` (lists included)
    replaces the value in ``base``, and ``None`` removes the key. Neither argument is
    modified, and the result shares no dicts or lists with either argument, so callers may
    change it freely.
    """
    result = copy.deepcopy(base)
    for key, value in override.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result
