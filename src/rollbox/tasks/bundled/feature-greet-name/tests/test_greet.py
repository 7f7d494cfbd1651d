from greet import greet


def test_simple_name():
    assert greet("Bob") == "Hello, Bob!"


def test_name_with_space():
    assert greet("Grace Hopper") == "Hello, Grace Hopper!"


def test_lowercase_name():
    assert greet("linus") == "Hello, linus!"


def test_empty_name():
    assert greet("") == "Hello, !"
