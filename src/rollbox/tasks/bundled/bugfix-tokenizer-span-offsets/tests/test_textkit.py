import pytest

from textkit import Token, highlight, normalize, tokenize

SAMPLES = [
    "plain single spaces, nothing odd.",
    "   leading indentation and trailing   ",
    "tabs\tbetween\t\twords",
    "line one\nline two\r\n\r\nline four",
    "no\u00a0break\u2003em space",
    "Ünïcödé  wörds — dashes…  and  “quotes”",
    "",
    " \n\t ",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_offsets_point_into_original_text(text):
    tokens = tokenize(text)
    for tok in tokens:
        assert text[tok.start:tok.end] == tok.text
    starts = [t.start for t in tokens]
    assert starts == sorted(starts)
    rebuilt = "".join(t.text for t in tokens)
    assert rebuilt == "".join(text.split())


def test_exact_tokens_with_irregular_spacing():
    text = "  Hi,\tyou  there!\n"
    assert tokenize(text) == [
        Token("Hi", 2, 4, "word"),
        Token(",", 4, 5, "punct"),
        Token("you", 6, 9, "word"),
        Token("there", 11, 16, "word"),
        Token("!", 16, 17, "punct"),
    ]


def test_word_shapes_unchanged():
    tokens = tokenize("It's state-of-the-art (v2.0) rock\u2019n\u2019roll -- ok")
    assert [(t.text, t.kind) for t in tokens] == [
        ("It's", "word"), ("state-of-the-art", "word"), ("(", "punct"), ("v2", "word"),
        (".", "punct"), ("0", "word"), (")", "punct"), ("rock\u2019n\u2019roll", "word"),
        ("-", "punct"), ("-", "punct"), ("ok", "word"),
    ]


def test_highlight_keeps_whitespace_exactly():
    text = "Release notes:\n\n  * Fixed   the Parser\t(again).\n  * parser docs"
    assert highlight(text, ["parser"]) == (
        "Release notes:\n\n  * Fixed   the [Parser]\t(again).\n  * [parser] docs"
    )


def test_highlight_normalised_matching_and_markers():
    text = "\tCAFÉ  opens;   the café\u2019s   terrace don\u2019t"
    assert highlight(text, ["cafe", "don't"], "<b>", "</b>") == (
        "\t<b>CAFÉ</b>  opens;   the café\u2019s   terrace <b>don\u2019t</b>"
    )


def test_highlight_without_matches_returns_text():
    text = "  nothing   to\tsee \n"
    assert highlight(text, ["absent"]) == text
    assert highlight("", ["x"]) == ""


def test_normalize():
    assert normalize("Ñandú") == "nandu"
    assert normalize("STRASSE") == normalize("straße")
    assert normalize("it\u2019s") == "it's"
