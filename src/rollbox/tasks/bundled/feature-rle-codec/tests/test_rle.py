import pytest

from codec import CodecError, decode, encode
from codec.errors import CodecError as ErrorsCodecError


def test_encode_basic():
    assert encode("wwwwbbbz") == "4w3b1z"


def test_encode_single_characters():
    assert encode("xyz") == "1x1y1z"


def test_encode_long_run():
    assert encode("q" * 27 + "r") == "27q1r"
    assert encode("-" * 100) == "100-"


def test_encode_alternating_runs_not_merged():
    assert encode("aabaa") == "2a1b2a"


def test_encode_whitespace_and_unicode():
    assert encode("  \n\nééé") == "2 2\n3é"


def test_encode_empty():
    assert encode("") == ""


@pytest.mark.parametrize("text", ["abc1", "7", "no 2 ways", "x0"])
def test_encode_rejects_digits(text):
    with pytest.raises(CodecError):
        encode(text)


def test_codec_error_is_the_package_error():
    with pytest.raises(ErrorsCodecError):
        encode("r2d2")


def test_decode_basic():
    assert decode("4w3b1z") == "wwwwbbbz"


def test_decode_multi_digit_counts():
    assert decode("15k2m") == "k" * 15 + "mm"
    assert decode("120.") == "." * 120


def test_decode_non_maximal_runs():
    assert decode("1p2p3p") == "pppppp"


def test_decode_whitespace_and_unicode():
    assert decode("3 1\n2ü") == "   \nüü"


def test_decode_empty():
    assert decode("") == ""


@pytest.mark.parametrize(
    "data",
    ["k", "3kj", "4pq", "4", "5g6", "0z", "2a0b", "05z", "1a007b"],
)
def test_decode_rejects_malformed(data):
    with pytest.raises(CodecError):
        decode(data)


@pytest.mark.parametrize(
    "text",
    ["", "m", "mississippi", "  leading and trailing  ", "zzzzzzzzzzzzzzzzzzzzzzz!", "tab\there", "ÅÅÅøø"],
)
def test_round_trip(text):
    assert decode(encode(text)) == text
