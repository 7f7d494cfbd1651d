import pytest

from semver import Version, compare, latest, parse, satisfies, sort_versions

SPEC_ORDER = [
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
]


def test_spec_precedence_example():
    shuffled = [SPEC_ORDER[i] for i in (5, 2, 7, 0, 4, 6, 1, 3)]
    assert sort_versions(shuffled) == SPEC_ORDER


@pytest.mark.parametrize(
    "low, high",
    [
        ("3.1.0-build.3", "3.1.0-build.20"),
        ("0.9.0-7", "0.9.0-12"),
        ("1.0.0-x.7.z.92", "1.0.0-x.7.z.100"),
        ("2.0.0-99", "2.0.0-alpha"),
        ("2.0.0-1.9", "2.0.0-1.10"),
        ("2.0.0-1.999", "2.0.0-1.a"),
        ("1.2.3-alpha-1", "1.2.3-alpha-2"),
        ("1.2.3-Zeta", "1.2.3-alpha"),
        ("4.0.0-pre.5", "4.0.0-pre.5.1"),
        ("4.0.0", "4.0.1-alpha.1"),
    ],
)
def test_pairwise_precedence(low, high):
    assert compare(low, high) == -1
    assert compare(high, low) == 1


def test_latest_prerelease_numeric():
    tags = ["5.0.0-beta.8", "5.0.0-beta.12", "5.0.0-beta.9", "4.9.1"]
    assert latest(tags, include_prereleases=True) == "5.0.0-beta.12"
    assert latest(tags) == "4.9.1"
    assert latest(["1.0.0-rc.1"]) is None


def test_constraints_with_prereleases():
    assert satisfies("1.0.0-beta.11", ">1.0.0-beta.2")
    assert not satisfies("1.0.0-beta.11", "<1.0.0-beta.3")
    assert satisfies("1.0.0-rc.10", ">=1.0.0-rc.9, <1.0.0")
    assert satisfies("1.5.0", ">=1.2.0, <2.0.0, !=1.4.0")
    assert not satisfies("2.0.0", ">=1.2.0, <2.0.0")
    with pytest.raises(ValueError):
        satisfies("1.0.0", "~1.0.0")


def test_build_metadata_ignored_and_sort_stable():
    assert compare("1.0.0+build.9", "1.0.0+build.10") == 0
    assert compare("1.0.0-rc.1+a", "1.0.0-rc.1+b") == 0
    assert sort_versions(["1.0.0+zz", "1.0.0-rc.2", "1.0.0+aa"]) == ["1.0.0-rc.2", "1.0.0+zz", "1.0.0+aa"]


def test_core_ordering_and_parsing_unchanged():
    assert sort_versions(["1.10.0", "1.2.0", "v1.9.9", "0.99.0"]) == ["0.99.0", "1.2.0", "v1.9.9", "1.10.0"]
    assert compare(Version(1, 0, 0), "1.0.0") == 0
    assert parse("v2.3.4-rc.1+sha.5") == Version(2, 3, 4, ("rc", "1"), ("sha", "5"))
    assert str(parse("2.3.4-rc.1+sha.5")) == "2.3.4-rc.1+sha.5"
    for bad in ("1.0", "01.0.0", "1.0.0-01", "1.0.0-", "1.0.0+"):
        with pytest.raises(ValueError):
            parse(bad)
