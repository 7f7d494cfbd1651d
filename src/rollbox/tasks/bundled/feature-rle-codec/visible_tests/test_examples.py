from codec import decode, encode


def test_encode_example():
    assert encode("aaabcc") == "3a1b2c"


def test_decode_example():
    assert decode("3a1b2c") == "aaabcc"
