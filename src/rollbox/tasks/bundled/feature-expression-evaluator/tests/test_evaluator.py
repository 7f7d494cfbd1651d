import pytest

from calc import CalcError, evaluate


@pytest.mark.parametrize(
    "text, expected",
    [
        ("42", 42),
        ("8 - 5 + 4", 7),
        ("20 - 6 - 5 - 1", 8),
        ("4 + 6 * 5", 34),
        ("50 / 5 / 2", 5.0),
        ("9 / 4", 2.25),
        ("17 % 5 * 3", 6),
        ("2 * 3 % 4", 2),
        ("-7 % 3", 2),
        ("(4 + 6) * 5", 50),
        ("((((3))))", 3),
        ("2 * (3 + (4 - 1)) * 2", 24),
        ("3 ^ 2", 9),
        ("2 ^ 2 ^ 3", 256),
        ("(2 ^ 2) ^ 3", 64),
        ("-3 ^ 2", -9),
        ("(-3) ^ 2", 9),
        ("2 ^ -2", 0.25),
        ("-2 ^ -2", -0.25),
        ("4 ^ 0.5", 2.0),
        ("2 * 3 ^ 2", 18),
        ("-5 + 2", -3),
        ("6 - -2", 8),
        ("---4", -4),
        ("+-+6", -6),
        ("1.5 * 4", 6.0),
        ("10 - 2.5", 7.5),
        ("  12   *2", 24),
        ("7-3", 4),
    ],
)
def test_values(text, expected):
    assert evaluate(text) == expected


def test_integer_results_stay_int():
    assert type(evaluate("6 * 7 - 2")) is int
    assert type(evaluate("2 ^ 10")) is int
    assert type(evaluate("9 / 3")) is float


def test_variables():
    env = {"width": 12, "height": 3.5, "n": -2}
    assert evaluate("width * height", env) == 42.0
    assert evaluate("width - n ^ 2", env) == 8
    assert evaluate("(width + n) / 4", env) == 2.5


def test_variable_names_with_underscores_and_digits():
    assert evaluate("rate_2 * _base", {"rate_2": 3, "_base": 11}) == 33


def test_functions():
    assert evaluate("abs(3 - 10)") == 7
    assert evaluate("max(4, 9, 2) - min(8, 5)") == 4
    assert evaluate("min(7)") == 7
    assert evaluate("2 * max(1, abs(-6), 3) ^ 2") == 72
    assert evaluate("max(x, y) + 1", {"x": 5, "y": 12}) == 13


def test_nested_calls_and_expressions_as_arguments():
    assert evaluate("max(min(3, 4 * 2), abs(-1 - 9) / 2)") == 5.0


def test_variable_named_like_function_without_call():
    assert evaluate("max + 1", {"max": 10}) == 11


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "2 +",
        "* 3",
        "(5 + 1",
        "5 + 1)",
        "()",
        "4 5",
        "2 (3)",
        "3 ^",
        "7 $ 2",
        "1..2",
        "abs()",
        "max(1,)",
        "max(,1)",
        "abs(1, 2)",
        "sqrt(16)",
        "unknown_var + 1",
        "8 / 0",
        "8 % 0",
        "8 / (3 - 3)",
        "0 ^ -3",
        "1 / 0.0",
    ],
)
def test_errors(text):
    with pytest.raises(CalcError):
        evaluate(text)


def test_unknown_variable_even_with_other_variables():
    with pytest.raises(CalcError):
        evaluate("a + b", {"a": 1})


def test_no_eval_of_python():
    with pytest.raises(CalcError):
        evaluate("__import__('os')")
