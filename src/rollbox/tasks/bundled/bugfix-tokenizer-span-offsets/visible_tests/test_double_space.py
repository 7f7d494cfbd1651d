from textkit import highlight


def test_highlight_after_double_space():
    assert highlight("Deploy  the build", ["build"]) == "Deploy  the [build]"
