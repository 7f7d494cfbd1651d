import pytest

from pager import page_count, page_info, page_slice


@pytest.mark.parametrize(
    "total, per_page, expected",
    [(0, 5, 0), (1, 5, 1), (5, 5, 1), (6, 5, 2), (11, 4, 3), (12, 4, 3), (13, 4, 4), (7, 1, 7), (99, 100, 1)],
)
def test_page_count(total, per_page, expected):
    assert page_count(total, per_page) == expected


def test_invalid_arguments():
    with pytest.raises(ValueError):
        page_count(10, 0)
    with pytest.raises(ValueError):
        page_count(-1, 10)


def test_last_partial_page_is_reachable():
    items = list("abcdefghij")
    assert page_slice(items, 1, 4) == ["a", "b", "c", "d"]
    assert page_slice(items, 2, 4) == ["e", "f", "g", "h"]
    assert page_slice(items, 3, 4) == ["i", "j"]
    with pytest.raises(IndexError):
        page_slice(items, 4, 4)


def test_small_list_fits_on_one_page():
    assert page_slice([10, 20], 1, 25) == [10, 20]
    with pytest.raises(IndexError):
        page_slice([10, 20], 2, 25)


def test_empty_list_and_bad_pages():
    assert page_slice([], 1, 10) == []
    with pytest.raises(IndexError):
        page_slice([], 2, 10)
    with pytest.raises(IndexError):
        page_slice([1, 2, 3], 0, 2)


def test_page_info():
    assert page_info(21, 2, 10) == {"page": 2, "pages": 3, "has_next": True}
    assert page_info(21, 3, 10) == {"page": 3, "pages": 3, "has_next": False}
    assert page_info(20, 2, 10) == {"page": 2, "pages": 2, "has_next": False}
