import pytest

from booking import Slot, free_slots, merge_slots


def S(a, b):
    return Slot(a, b)


def test_merge_empty():
    assert merge_slots([]) == []


def test_merge_disjoint_are_sorted():
    assert merge_slots([S(300, 330), S(100, 140), S(200, 220)]) == [S(100, 140), S(200, 220), S(300, 330)]


def test_merge_overlapping():
    assert merge_slots([S(500, 560), S(540, 600), S(590, 610)]) == [S(500, 610)]


def test_merge_contained():
    assert merge_slots([S(400, 700), S(450, 500), S(600, 650)]) == [S(400, 700)]


def test_merge_touching_with_default_gap():
    assert merge_slots([S(480, 510), S(510, 525)]) == [S(480, 525)]


def test_merge_not_touching_with_default_gap():
    assert merge_slots([S(480, 510), S(511, 525)]) == [S(480, 510), S(511, 525)]


def test_merge_duplicates():
    assert merge_slots([S(10, 20), S(10, 20), S(10, 20)]) == [S(10, 20)]


def test_merge_with_gap_boundary():
    slots = [S(600, 630), S(640, 650), S(661, 700)]
    assert merge_slots(slots, gap=10) == [S(600, 650), S(661, 700)]
    assert merge_slots(slots, gap=11) == [S(600, 700)]


def test_merge_gap_uses_furthest_end_so_far():
    # the long slot reaches past the short one, so the gap is measured from 900
    slots = [S(700, 900), S(710, 720), S(905, 910)]
    assert merge_slots(slots, gap=5) == [S(700, 910)]
    assert merge_slots(slots, gap=4) == [S(700, 900), S(905, 910)]


def test_merge_does_not_modify_input():
    slots = [S(50, 60), S(0, 55)]
    copy = list(slots)
    merge_slots(slots)
    assert slots == copy


def test_merge_accepts_generator():
    assert merge_slots(S(i * 10, i * 10 + 10) for i in range(5)) == [S(0, 50)]


def test_merge_negative_gap():
    with pytest.raises(ValueError):
        merge_slots([S(1, 2)], gap=-1)


def test_free_no_busy():
    assert free_slots([], S(540, 1020)) == [S(540, 1020)]


def test_free_basic():
    busy = [S(600, 660), S(780, 840)]
    assert free_slots(busy, S(540, 1020)) == [S(540, 600), S(660, 780), S(840, 1020)]


def test_free_unsorted_overlapping_busy():
    busy = [S(800, 900), S(570, 620), S(600, 650), S(850, 870)]
    assert free_slots(busy, S(540, 960)) == [S(540, 570), S(650, 800), S(900, 960)]


def test_free_busy_touching_leaves_no_gap():
    busy = [S(600, 630), S(630, 700)]
    assert free_slots(busy, S(560, 720)) == [S(560, 600), S(700, 720)]


def test_free_busy_outside_window_is_ignored():
    busy = [S(100, 200), S(1100, 1200)]
    assert free_slots(busy, S(480, 1000)) == [S(480, 1000)]


def test_free_busy_crossing_window_edges():
    busy = [S(400, 500), S(950, 1100)]
    assert free_slots(busy, S(480, 1000)) == [S(500, 950)]


def test_free_busy_at_exact_window_edges():
    busy = [S(480, 490), S(990, 1000)]
    assert free_slots(busy, S(480, 1000)) == [S(490, 990)]


def test_free_fully_covered():
    assert free_slots([S(0, 300), S(250, 1440)], S(480, 1000)) == []
    assert free_slots([S(480, 1000)], S(480, 1000)) == []


def test_results_are_slots():
    result = free_slots([S(10, 20)], S(0, 30)) + merge_slots([S(5, 6)])
    assert all(type(s) is Slot for s in result)
