"""Configuration for the shop service: defaults, profiles, overrides, environment."""

from shopconfig.env import apply_env
from shopconfig.loader import DEFAULTS, PROFILES, load
from shopconfig.merge import deep_merge

__all__ = ["DEFAULTS", "PROFILES", "apply_env", "deep_merge", "load"]
