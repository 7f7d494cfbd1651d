"""Building the configuration for one deployment profile."""

from shopconfig.env import apply_env
from shopconfig.merge import deep_merge

DEFAULTS = {
    "app": {"name": "shop", "debug": False, "workers": 2},
    "db": {"host": "localhost", "port": 5432, "name": "shop", "pool": {"min": 1, "max": 5}},
    "logging": {"level": "info", "handlers": ["console"]},
    "payments": {"provider": "sandbox", "currencies": ["EUR"]},
}

PROFILES = {
    "dev": {"app": {"debug": True}, "db": {"name": "shop_dev"}},
    "staging": {"db": {"host": "db.staging.internal"}},
    "prod": {
        "app": {"workers": 8},
        "db": {"host": "db.prod.internal", "pool": {"max": 20}},
        "logging": {"level": "warning", "handlers": ["console", "syslog"]},
        "payments": {"provider": "live", "currencies": ["EUR", "USD"]},
    },
}


def load(profile, overrides=None, environ=None):
    """The configuration for ``profile``.

    Layers, lowest first: DEFAULTS, the profile, ``overrides`` (a nested dict), then
    ``environ`` (see shopconfig.env). Each call returns a fresh dict that the caller owns.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile: {profile!r}")
    config = deep_merge(DEFAULTS, PROFILES[profile])
    if overrides:
        config = deep_merge(config, overrides)
    if environ:
        apply_env(config, environ)
    return config
