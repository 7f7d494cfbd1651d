import pytest

from histo import bin_edges, histogram, render


def test_maximum_counted_in_last_bin_with_default_range():
    counts, edges = histogram([1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 10], 3)
    assert counts == [6, 4, 1]
    assert edges == pytest.approx([1, 4, 7, 10])


@pytest.mark.parametrize(
    "values, bins",
    [
        ([0.5, 1.5, 2.5, 3.5], 2),
        ([-7, -3, 0, 12, 12, 12], 4),
        ([100, 250, 375, 1000], 9),
        ([0.125, 0.25, 0.375, 0.5, 0.625], 1),
    ],
)
def test_every_value_is_counted_with_default_range(values, bins):
    counts, edges = histogram(values, bins)
    assert sum(counts) == len(values)
    assert len(counts) == bins
    assert len(edges) == bins + 1
    assert counts[-1] >= values.count(max(values))


def test_explicit_hi_equal_to_values():
    counts, _ = histogram([0, 5, 10, 10, 2.5], 2, lo=0, hi=10)
    assert counts == [2, 3]


def test_values_outside_range_ignored():
    counts, _ = histogram([-1, 0, 3, 8, 8.5, 11], 2, lo=0, hi=8)
    assert counts == [2, 1]


def test_interior_edges_belong_to_the_right_bin():
    counts, _ = histogram([0, 2, 4, 6, 8], 4, lo=0, hi=8)
    assert counts == [1, 1, 1, 2]


def test_all_equal_values():
    counts, edges = histogram([3, 3, 3], 4)
    assert counts == [3, 0, 0, 0]
    assert edges == pytest.approx([3, 3.25, 3.5, 3.75, 4])


def test_errors():
    with pytest.raises(ValueError):
        histogram([1, 2], 0)
    with pytest.raises(ValueError):
        histogram([], 3)
    with pytest.raises(ValueError):
        bin_edges(5, 5, 2)
    assert histogram([], 2, lo=0, hi=1)[0] == [0, 0]


def test_render_includes_top_value():
    counts, edges = histogram([0, 1, 1, 2, 4], 2)
    assert counts == [3, 2]
    assert render(counts, edges, width=6) == "[0, 2)    3 ######\n[2, 4]    2 ####"
