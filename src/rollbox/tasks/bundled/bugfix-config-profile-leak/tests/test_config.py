import copy

import pytest

from shopconfig import DEFAULTS, PROFILES, apply_env, deep_merge, load


def test_env_in_one_profile_does_not_change_another():
    dev = load("dev", environ={"SHOP_DB__POOL__MAX": "50", "SHOP_LOGGING__LEVEL": "debug"})
    assert dev["db"]["pool"] == {"min": 1, "max": 50}
    assert dev["logging"]["level"] == "debug"
    staging = load("staging")
    assert staging["db"]["pool"] == {"min": 1, "max": 5}
    assert staging["logging"]["level"] == "info"


def test_list_append_from_env_does_not_leak():
    first = load("staging", environ={"SHOP_LOGGING__HANDLERS": "+file"})
    assert first["logging"]["handlers"] == ["console", "file"]
    prod = load("prod", environ={"SHOP_PAYMENTS__CURRENCIES": "+GBP"})
    assert prod["payments"]["currencies"] == ["EUR", "USD", "GBP"]
    assert load("staging")["logging"]["handlers"] == ["console"]
    assert load("prod")["payments"]["currencies"] == ["EUR", "USD"]


def test_tables_unchanged_after_caller_edits():
    before_defaults = copy.deepcopy(DEFAULTS)
    before_profiles = copy.deepcopy(PROFILES)
    for name in ("dev", "staging", "prod"):
        cfg = load(name)
        cfg["app"]["name"] = "hacked"
        cfg["db"]["pool"]["min"] = 99
        cfg["logging"]["handlers"].append("x")
        cfg["payments"]["currencies"].clear()
    assert DEFAULTS == before_defaults
    assert PROFILES == before_profiles


def test_overrides_are_copied():
    overrides = {"cache": {"backend": "redis", "nodes": ["c1"]}, "app": {"workers": 3}}
    cfg = load("dev", overrides=overrides)
    overrides["cache"]["nodes"].append("c2")
    overrides["app"]["workers"] = 100
    assert cfg["cache"] == {"backend": "redis", "nodes": ["c1"]}
    assert cfg["app"]["workers"] == 3
    cfg["cache"]["backend"] = "memcached"
    assert overrides["cache"]["backend"] == "redis"


def test_deep_merge_contract():
    base = {"a": {"b": {"c": 1}, "keep": [1, 2]}, "top": [{"x": 1}], "gone": 5}
    override = {"a": {"b": {"d": 2}}, "new": {"n": [3]}, "gone": None}
    snapshot = (copy.deepcopy(base), copy.deepcopy(override))
    merged = deep_merge(base, override)
    assert merged == {"a": {"b": {"c": 1, "d": 2}, "keep": [1, 2]}, "top": [{"x": 1}], "new": {"n": [3]}}
    merged["a"]["keep"].append(3)
    merged["top"][0]["x"] = 9
    merged["new"]["n"].append(4)
    assert (base, override) == snapshot


def test_layering_unchanged():
    prod = load("prod", overrides={"db": {"port": 6432}, "payments": None},
                environ={"SHOP_APP__DEBUG": "TRUE", "OTHER_X": "1", "SHOP_FEATURE__BETA": "on"})
    assert prod["app"] == {"name": "shop", "debug": True, "workers": 8}
    assert prod["db"] == {"host": "db.prod.internal", "port": 6432, "name": "shop", "pool": {"min": 1, "max": 20}}
    assert prod["logging"] == {"level": "warning", "handlers": ["console", "syslog"]}
    assert "payments" not in prod
    assert prod["feature"] == {"beta": "on"}
    assert load("dev")["db"]["name"] == "shop_dev"
    with pytest.raises(ValueError):
        load("qa")
    with pytest.raises(ValueError):
        apply_env({"db": "x"}, {"SHOP_DB__HOST": "h"})
