from textutil import MINOR_WORDS, headline_case, normalize_spaces


def test_basic_minor_words():
    assert headline_case("a tale of two cities") == "A Tale of Two Cities"


def test_minor_word_last_is_capitalized():
    assert headline_case("what the fuss is all about") == "What the Fuss Is All About"
    assert headline_case("something to write home about in") == "Something to Write Home About In"


def test_minor_words_lowercased_case_insensitively():
    assert headline_case("war And peace") == "War and Peace"
    assert headline_case("Gone With The Wind") == "Gone With the Wind"


def test_mixed_case_words_are_normalized():
    assert headline_case("pYTHON tIPS fOr bEGINNERS") == "Python Tips for Beginners"


def test_acronyms_are_kept():
    assert headline_case("how NASA uses HTTP at scale") == "How NASA Uses HTTP at Scale"


def test_single_capital_letter_is_not_an_acronym():
    assert headline_case("a day in the life") == "A Day in the Life"
    assert headline_case("life in A minor key") == "Life in a Minor Key"


def test_apostrophes_and_hyphens():
    assert headline_case("don't look back in anger") == "Don't Look Back in Anger"
    assert headline_case("state-of-the-art e-mail") == "State-of-the-art E-mail"


def test_whitespace_is_normalized():
    assert headline_case("  the   quick\tbrown\nfox  ") == "The Quick Brown Fox"


def test_empty_and_blank():
    assert headline_case("") == ""
    assert headline_case("   \t ") == ""


def test_single_word():
    assert headline_case("of") == "Of"
    assert headline_case("zEBRA") == "Zebra"


def test_digits_and_punctuation():
    assert headline_case("top 10 tips: on the road") == "Top 10 Tips: on the Road"


def test_helpers_unchanged():
    assert "nor" in MINOR_WORDS and "with" not in MINOR_WORDS
    assert normalize_spaces(" a  b ") == "a b"
