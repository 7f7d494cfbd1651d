import copy

import pytest

import shopconfig.loader as loader


@pytest.fixture(autouse=True)
def pristine_tables():
    """Restore the module tables after every test, so one failure cannot cascade."""
    defaults = copy.deepcopy(loader.DEFAULTS)
    profiles = copy.deepcopy(loader.PROFILES)
    yield
    loader.DEFAULTS.clear()
    loader.DEFAULTS.update(defaults)
    loader.PROFILES.clear()
    loader.PROFILES.update(profiles)
