import pytest

from minitpl import TemplateError, render


def test_plain_text_unchanged():
    text = "No placeholders here: {single} braces } and { are fine }}"
    assert render(text, {}) == text


def test_several_placeholders_and_whitespace():
    ctx = {"first": "Dana", "city": "Lyon"}
    assert render("{{first}} lives in {{   city   }}.", ctx) == "Dana lives in Lyon."


def test_adjacent_placeholders():
    assert render("{{a}}{{b}}{{a}}", {"a": "x", "b": "y"}) == "xyx"


def test_nested_dict_path():
    ctx = {"order": {"customer": {"email": "q@example.org"}}}
    assert render("Send to <{{ order.customer.email }}>", ctx) == "Send to <q@example.org>"


def test_list_index_path():
    ctx = {"items": [{"sku": "K-77"}, {"sku": "M-03"}], "pair": ("left", "right")}
    assert render("{{ items.1.sku }} / {{ pair.0 }}", ctx) == "M-03 / left"


def test_non_string_values():
    ctx = {"count": 12, "ratio": 0.5, "ok": False, "tags": ["a", "b"]}
    assert render("{{count}} {{ratio}} {{ok}} {{tags}}", ctx) == "12 0.5 False ['a', 'b']"


def test_zero_and_empty_are_not_none():
    assert render("[{{ n }}][{{ s }}]", {"n": 0, "s": ""}) == "[0][]"


def test_none_renders_empty():
    assert render("<{{ middle }}>", {"middle": None}) == "<>"


def test_filters_chain_left_to_right():
    ctx = {"name": "  grace hopper  "}
    assert render("{{ name | strip | title }}!", ctx) == "Grace Hopper!"
    assert render("{{name|upper|length}}", {"name": "abcd"}) == "4"


def test_filter_on_list_and_number():
    ctx = {"lines": ["x", "y", "z"], "total": 1234567.891}
    assert render("{{ lines | length }} lines, {{ total | money }}", ctx) == "3 lines, 1,234,567.89"
    assert render("{{ lines | first | upper }}", ctx) == "X"


def test_values_are_not_rescanned():
    ctx = {"snippet": "{{ secret }}", "secret": "s3cr3t"}
    assert render("Code: {{ snippet }}", ctx) == "Code: {{ secret }}"


def test_escape():
    assert render(r"Use \{{ name }} to insert a name", {}) == "Use {{ name }} to insert a name"
    assert render(r"\{{x}} is {{x}}", {"x": 7}) == "{{x}} is 7"


def test_other_backslashes_are_text():
    assert render(r"C:\temp\{n} \ {{ v }}", {"v": "ok"}) == r"C:\temp\{n} \ ok"


def test_first_closing_braces_end_the_placeholder():
    assert render("{{ a }}}}", {"a": "1"}) == "1}}"


def test_multiline_template():
    template = "Dear {{ who }},\n\nTotal: {{ amount | money }}\n"
    assert render(template, {"who": "Lee", "amount": 5}) == "Dear Lee,\n\nTotal: 5.00\n"


@pytest.mark.parametrize(
    "template, ctx",
    [
        ("Hello {{ name", {"name": "x"}),
        ("{{   }}", {}),
        ("{{}}", {}),
        ("{{ missing }}", {"present": 1}),
        ("{{ user.age }}", {"user": {"name": "x"}}),
        ("{{ user.name.first }}", {"user": {"name": "x"}}),
        ("{{ items.5 }}", {"items": [1, 2]}),
        ("{{ items.-1 }}", {"items": [1, 2]}),
        ("{{ items.x }}", {"items": [1, 2]}),
        ("{{ x..y }}", {"x": {"y": 1}}),
        ("{{ .name }}", {"name": 1}),
        ("{{ a. }}", {"a": {"": 1}}),
        ("{{ a | nope }}", {"a": 1}),
        ("{{ v | upper | }}", {"v": "q"}),
        ("{{ |lower }}", {"a": 1}),
        ("{{ a b }}", {"a": 1, "a b": 2}),
    ],
)
def test_errors(template, ctx):
    with pytest.raises(TemplateError):
        render(template, ctx)


def test_error_in_later_placeholder():
    with pytest.raises(TemplateError):
        render("{{ ok }} then {{ broken", {"ok": 1})
