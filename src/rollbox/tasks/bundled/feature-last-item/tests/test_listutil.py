from listutil import last


def test_strings():
    assert last(["x", "y", "z"]) == "z"


def test_single_element():
    assert last([42]) == 42


def test_numbers():
    assert last([9, 8, 7, 6, 5]) == 5


def test_nested_lists():
    assert last([[1], [2, 3]]) == [2, 3]


def test_does_not_modify_list():
    items = [4, 5, 6]
    assert last(items) == 6
    assert items == [4, 5, 6]
