from minitpl import render


def test_simple_placeholder():
    assert render("Hi {{ name }}!", {"name": "Ann"}) == "Hi Ann!"


def test_filter():
    assert render("{{ code|upper }}", {"code": "ab1"}) == "AB1"
