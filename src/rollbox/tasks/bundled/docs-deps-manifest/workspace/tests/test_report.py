import textwrap

import yaml
from freezegun import freeze_time
from hypothesis import given, strategies as st

from app import report


@freeze_time("2024-01-31")
def test_csv(sample_rows):
    assert report.to_csv(sample_rows).splitlines() == ["acme,3", "globex,5"]


@given(st.integers(min_value=0, max_value=255))
def test_yaml_roundtrip(n):
    assert yaml.safe_load(textwrap.dedent(f"units: {n}")) == {"units": n}
