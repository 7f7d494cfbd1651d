import copy

import pytest

from recdiff import MISSING, Added, DiffError, Modified, Removed, diff_records, format_change, summarize


def test_identical_inputs():
    rows = [{"id": 3, "v": "a"}, {"id": 8, "v": "b"}]
    assert diff_records(rows, copy.deepcopy(rows)) == []


def test_both_empty():
    assert diff_records([], []) == []


def test_all_added_and_all_removed():
    rows = [{"id": 10}, {"id": 20, "n": 1}]
    assert diff_records([], rows) == [Added(10, {"id": 10}), Added(20, {"id": 20, "n": 1})]
    assert diff_records(rows, []) == [Removed(10, {"id": 10}), Removed(20, {"id": 20, "n": 1})]


def test_mixed_changes_in_key_order():
    old = [
        {"id": 1, "name": "ant", "qty": 4},
        {"id": 4, "name": "bee", "qty": 0},
        {"id": 6, "name": "cat", "qty": 2},
        {"id": 9, "name": "dog", "qty": 7},
    ]
    new = [
        {"id": 2, "name": "asp", "qty": 1},
        {"id": 4, "name": "bee", "qty": 3},
        {"id": 6, "name": "cat", "qty": 2},
        {"id": 11, "name": "eel", "qty": 5},
    ]
    assert diff_records(old, new) == [
        Removed(1, old[0]),
        Added(2, new[0]),
        Modified(4, {"qty": (0, 3)}),
        Removed(9, old[3]),
        Added(11, new[3]),
    ]


def test_modified_several_fields_and_missing_sides():
    old = [{"id": "k1", "a": 1, "b": 2, "gone": True}]
    new = [{"id": "k1", "a": 1, "b": 20, "fresh": None}]
    assert diff_records(old, new) == [
        Modified("k1", {"b": (2, 20), "gone": (True, MISSING), "fresh": (MISSING, None)})
    ]


def test_none_value_differs_from_missing_field():
    old = [{"id": 1, "note": None}]
    new = [{"id": 1}]
    assert diff_records(old, new) == [Modified(1, {"note": (None, MISSING)})]


def test_values_compared_with_equality():
    old = [{"id": 1, "x": 2, "tags": ["a", "b"]}]
    new = [{"id": 1, "x": 2.0, "tags": ["a", "b"]}]
    assert diff_records(old, new) == []


def test_nested_value_change():
    old = [{"id": 5, "meta": {"k": 1}}]
    new = [{"id": 5, "meta": {"k": 2}}]
    assert diff_records(old, new) == [Modified(5, {"meta": ({"k": 1}, {"k": 2})})]


def test_ignore_fields():
    old = [{"id": 1, "updated": "mon", "v": 1}, {"id": 2, "updated": "mon", "v": 1}]
    new = [{"id": 1, "updated": "tue", "v": 1}, {"id": 2, "updated": "tue", "v": 9}]
    assert diff_records(old, new, ignore=["updated"]) == [Modified(2, {"v": (1, 9)})]


def test_ignored_field_missing_on_one_side():
    old = [{"id": 1, "etag": "x"}]
    new = [{"id": 1}]
    assert diff_records(old, new, ignore=("etag",)) == []


def test_custom_key_field():
    old = [{"sku": "A-1", "id": 100, "p": 5}, {"sku": "B-2", "id": 7, "p": 6}]
    new = [{"sku": "A-1", "id": 100, "p": 5}, {"sku": "B-2", "id": 8, "p": 6}]
    assert diff_records(old, new, key="sku") == [Modified("B-2", {"id": (7, 8)})]


def test_tuple_keys():
    old = [{"k": (1, "a"), "v": 1}, {"k": (1, "b"), "v": 1}]
    new = [{"k": (1, "b"), "v": 2}, {"k": (2, "a"), "v": 1}]
    assert diff_records(old, new, key="k") == [
        Removed((1, "a"), old[0]),
        Modified((1, "b"), {"v": (1, 2)}),
        Added((2, "a"), new[1]),
    ]


def test_generators_are_accepted():
    old = ({"id": i, "sq": i * i} for i in range(0, 10, 2))  # ids 0 2 4 6 8
    new = ({"id": i, "sq": i * i + (i == 6)} for i in range(0, 12, 3))  # ids 0 3 6 9
    assert diff_records(old, new) == [
        Removed(2, {"id": 2, "sq": 4}),
        Added(3, {"id": 3, "sq": 9}),
        Removed(4, {"id": 4, "sq": 16}),
        Modified(6, {"sq": (36, 37)}),
        Removed(8, {"id": 8, "sq": 64}),
        Added(9, {"id": 9, "sq": 81}),
    ]


def test_inputs_not_modified():
    old = [{"id": 1, "a": 1}, {"id": 2, "a": [1]}]
    new = [{"id": 1, "a": 2}, {"id": 3}]
    old_copy, new_copy = copy.deepcopy(old), copy.deepcopy(new)
    diff_records(old, new, ignore=["zzz"])
    assert old == old_copy and new == new_copy


def test_key_never_in_fields():
    result = diff_records([{"id": 1, "a": 1}], [{"id": 1, "a": 2}])
    assert "id" not in result[0].fields


@pytest.mark.parametrize(
    "old, new",
    [
        ([{"id": 2}, {"id": 1}], []),
        ([], [{"id": 2}, {"id": 1}]),
        ([{"id": 1}, {"id": 1}], [{"id": 1}]),
        ([{"id": 1}], [{"id": 5}, {"id": 7}, {"id": 7}]),
        ([{"id": 1}, {"name": "no key"}], [{"id": 1}]),
        ([{"id": 1}], [{"id": 2}, {"other": 3}]),
        ([{"id": 1}, {"id": "2"}], []),
        ([{"id": 1}], [{"id": "1"}]),
    ],
)
def test_invalid_inputs(old, new):
    with pytest.raises(DiffError):
        diff_records(old, new)


def test_unsorted_detected_after_other_input_is_exhausted():
    old = [{"id": 1}]
    new = [{"id": 1}, {"id": 30}, {"id": 20}]
    with pytest.raises(DiffError):
        diff_records(old, new)


def test_works_with_model_helpers():
    old = [{"id": 1, "a": 1}, {"id": 2}]
    new = [{"id": 1, "a": 3}, {"id": 4}]
    changes = diff_records(old, new)
    assert summarize(changes) == {"added": 1, "removed": 1, "modified": 1}
    assert [format_change(c) for c in changes] == ["~ 1 (a: 1 -> 3)", "- 2", "+ 4"]


def test_large_inputs_fast():
    n = 20000
    old = [{"id": i, "v": i % 7} for i in range(n)]
    new = [{"id": i, "v": i % 7 if i % 1000 else -1} for i in range(1, n + 1)]
    changes = diff_records(old, new)
    assert summarize(changes) == {"added": 1, "removed": 1, "modified": 19}
