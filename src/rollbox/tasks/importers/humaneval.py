"""HumanEval and MBPP: one function to write, checked by the benchmark's own assertions.

Both give the agent `solution.py` and hide `tests/test_solution.py`, which imports the
candidate's function(s) from it.

HumanEval (`task_id, prompt, canonical_solution, test, entry_point`): the workspace is the
prompt (its imports, helpers, the signature and docstring) with the entry point's body replaced
by `raise NotImplementedError`; the reference is `prompt + canonical_solution`. The hidden test
module re-creates the prompt's namespace from the pristine prompt (so the benchmark's check
uses the benchmark's own helpers, never the candidate's), binds the entry point to the
candidate's function, and calls the benchmark's `check(candidate)` in one test.

MBPP (`task_id, text | prompt, code, test_list`, optional `test_setup_code`,
`challenge_test_list`, `test_imports`): the functions the tests call are the ones the reference
`code` defines at top level; the workspace holds the code's imports and those functions'
signatures with `raise NotImplementedError` bodies (a class the tests use is given whole: it is
part of the interface). The agent sees the task's text, the signatures and the first assert;
every assert (the first included, then the challenge asserts) is one hidden test.
"""

from __future__ import annotations

import ast
import copy
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rollbox.tasks.importers.common import (
    ImportOptions,
    Record,
    SkipItem,
    Skipped,
    TaskDraft,
    convert_each,
    make_spec,
    normalize_text,
    read_records,
    require_fields,
    string_field,
    task_id,
)
from rollbox.tasks.model import Difficulty, Family

MODULE = "solution.py"
TEST_MODULE = "test_solution.py"
STUB = "raise NotImplementedError"


def parse(source: str, what: str) -> ast.Module:
    """The module's syntax tree, or a skip saying which part does not parse and where."""
    try:
        return ast.parse(source)
    except SyntaxError as e:
        raise SkipItem(f"{what} does not parse (line {e.lineno}: {e.msg})") from None
    except ValueError as e:  # a NUL byte
        raise SkipItem(f"{what} does not parse ({e})") from None


def _top_function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    found = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            found = node  # the last definition wins, as at run time
    return found


def _has_docstring(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    first = fn.body[0]
    return (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )


def _quoted(text: str) -> str:
    """Text that is safe inside a triple-quoted docstring."""
    return text.replace("\\", "/").replace('"', "'")


def _units(records: list[Record], field: str, prefix: str = "") -> list[tuple[str, Any]]:
    """(source id, record) pairs: the id is the record's `field`, or where the record is."""
    units = []
    for r in records:
        raw = r.value.get(field) if isinstance(r.value, dict) else None
        name = str(raw) if isinstance(raw, str | int) and str(raw).strip() else r.where
        units.append((prefix + name, r.value))
    return units


# ---------------------------------------------------------------------------------------------
# HumanEval

HUMANEVAL_FIELDS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")


def humaneval_drafts(src: Path, options: ImportOptions) -> Iterator[TaskDraft | Skipped]:
    """A draft (or a skip) per problem of a HumanEval JSONL file, in file order."""
    units = _units(read_records(src), "task_id")
    return convert_each(units, lambda sid, value: humaneval_draft(value, sid, options))


def _humaneval_id(raw: str) -> str:
    """`HumanEval/12` -> `humaneval-12`; other names keep their whole text."""
    head, sep, tail = raw.rpartition("/")
    return task_id("humaneval", tail if sep and head.lower().startswith("humaneval") else raw)


def humaneval_stub(prompt: str, reference: ast.Module, reference_text: str, entry: str) -> str:
    """The prompt with the entry point's body a `raise NotImplementedError`."""
    fn = _top_function(reference, entry)
    if fn is None:
        raise SkipItem(f"the entry point {entry!r} is not a top-level function of the reference")
    first = fn.body[0]
    line = reference_text.splitlines()[first.lineno - 1]
    indent = line[: first.col_offset]
    if indent.strip():
        raise SkipItem("cannot tell the indentation of the entry point's body")
    stub = prompt.rstrip() + "\n" + indent + STUB + "\n"
    tree = parse(stub, "the prompt with a stub body")
    sfn = _top_function(tree, entry)
    if sfn is None or len(sfn.body) != 1 + _has_docstring(sfn):
        raise SkipItem("the prompt does not end with the entry point's signature and docstring")
    return stub


def humaneval_test_module(stub: str, test: str, entry: str, source_id: str) -> str:
    """The hidden test: the pristine prompt's namespace, the candidate's entry point, the
    benchmark's `check`, and one pytest test that calls it."""
    return (
        f'"""{_quoted(source_id)}: the benchmark\'s own check, on the candidate\'s {entry}."""\n\n'
        "# The benchmark's prompt (its imports and helpers), as the benchmark wrote it.\n"
        f"{stub}\n\n"
        "# The candidate's function replaces the stub above.\n"
        f"from solution import {entry}  # noqa: E402\n\n"
        "# The benchmark's test.\n"
        f"{normalize_text(test)}\n\n"
        "def test_check():\n"
        f"    check({entry})\n"
    )


def humaneval_draft(value: Any, source_id: str, options: ImportOptions) -> TaskDraft:
    """One HumanEval problem as a task (raises SkipItem if it cannot be converted)."""
    item = require_fields(value, HUMANEVAL_FIELDS)
    prompt, solution, test, entry = (
        string_field(item, f) for f in ("prompt", "canonical_solution", "test", "entry_point")
    )
    prompt = prompt.replace("\r\n", "\n")
    if not entry.isidentifier():
        raise SkipItem(f"the entry point {entry!r} is not a Python name")
    reference_text = normalize_text(prompt + solution.replace("\r\n", "\n"))
    reference = parse(reference_text, "the reference (prompt + canonical_solution)")
    stub = humaneval_stub(prompt, reference, reference_text, entry)
    test_tree = parse(normalize_text(test), "the test")
    if _top_function(test_tree, "check") is None:
        raise SkipItem("the test defines no check(candidate)")
    hidden = humaneval_test_module(stub, test, entry, source_id)
    parse(hidden, "the hidden test module")
    instruction = (
        f"Implement `{entry}` in `{MODULE}`. The file holds the function's signature and "
        f"docstring (and any helpers it needs); its body only raises NotImplementedError. Keep "
        "the signature: hidden tests call it on the docstring's examples and on other inputs.\n\n"
        f"```python\n{prompt.strip()}\n```\n"
    )
    spec = make_spec(
        tid=_humaneval_id(string_field(item, "task_id")),
        title=f"{source_id}: implement {entry}",
        instruction=instruction,
        family=Family.feature,
        difficulty=Difficulty.easy,
        options=options,
        tags=("humaneval",),
    )
    return TaskDraft(
        source_id=source_id,
        spec=spec,
        workspace={MODULE: stub.encode()},
        tests={TEST_MODULE: hidden.encode()},
        solution={MODULE: reference_text.encode()},
    )


# ---------------------------------------------------------------------------------------------
# MBPP


def mbpp_drafts(src: Path, options: ImportOptions) -> Iterator[TaskDraft | Skipped]:
    """A draft (or a skip) per problem of an MBPP JSONL file (full or sanitized), in order."""
    units = _units(read_records(src), "task_id", "MBPP/")
    return convert_each(units, lambda sid, value: mbpp_draft(value, sid, options))


def _strings(item: dict[str, Any], name: str) -> list[str]:
    value = item.get(name) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SkipItem(f"field {name!r} is not a list of strings")
    return [normalize_text(v).rstrip("\n") for v in value]


def _names_used(trees: list[ast.Module]) -> set[str]:
    return {
        n.id
        for t in trees
        for n in ast.walk(t)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


def _stub_function(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The function's header (decorators, signature) and docstring, over a stub body."""
    body: list[ast.stmt] = [fn.body[0]] if _has_docstring(fn) else []
    body.append(ast.parse(STUB).body[0])
    stub = copy.copy(fn)  # shallow: the reference's own tree keeps its body
    stub.body = body
    return ast.unparse(ast.fix_missing_locations(stub))


def _signature(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    return _stub_function(fn).split("\n")[len(fn.decorator_list)].rstrip()


def mbpp_draft(value: Any, source_id: str, options: ImportOptions) -> TaskDraft:
    """One MBPP problem as a task (raises SkipItem if it cannot be converted)."""
    item = require_fields(value, ("task_id", "code", "test_list"))
    text = item.get("text") or item.get("prompt")
    if not isinstance(text, str) or not text.strip():
        raise SkipItem("missing field(s): text (or prompt)")
    code = normalize_text(string_field(item, "code"))
    tree = parse(code, "the reference code")
    tests = _strings(item, "test_list")
    challenge = _strings(item, "challenge_test_list")
    if not tests:
        raise SkipItem("no tests in 'test_list'")
    setup = normalize_text(item.get("test_setup_code") or "").strip()
    extra_imports = _strings(item, "test_imports")
    test_trees = [parse(t, f"test {t[:60]!r}") for t in [*tests, *challenge]]
    parse("\n".join(extra_imports), "test_imports")
    used = _names_used([*test_trees, parse(setup, "test_setup_code")])
    defs = [
        n
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name in used
    ]
    functions = [n for n in defs if not isinstance(n, ast.ClassDef)]
    if not functions:
        raise SkipItem("the tests call no function that the reference code defines")
    imports = [ast.unparse(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    pieces = [
        _stub_function(n)
        if not isinstance(n, ast.ClassDef)
        else (ast.get_source_segment(code, n) or ast.unparse(n))
        for n in defs
    ]
    head = "\n".join(imports) + "\n\n\n" if imports else ""
    workspace = head + "\n\n\n".join(pieces) + "\n"
    names = ", ".join(n.name for n in defs)
    header = [*imports, *extra_imports, f"from solution import {names}"]
    doc = f'"""{_quoted(source_id)}: the benchmark\'s asserts, one test each."""'
    sections = [doc, "\n".join(header)]
    if setup:
        sections.append(setup)
    for label, group in (("test", tests), ("test_challenge", challenge)):
        for i, t in enumerate(group, 1):
            body = ast.unparse(parse(t, "a test"))
            sections.append(f"def {label}_{i}():\n" + textwrap.indent(body, "    "))
    hidden = "\n\n\n".join(sections) + "\n"
    parse(hidden, "the hidden test module")
    signatures = "\n".join(_signature(f) for f in functions)
    classes = [n.name for n in defs if isinstance(n, ast.ClassDef)]
    given = (
        f"It also defines {', '.join(f'`{c}`' for c in classes)}, which the tests use.\n\n"
        if classes
        else ""
    )
    instruction = (
        f"{text.strip()}\n\nWrite it in `{MODULE}`, which holds the signature to implement:\n\n"
        f"```python\n{signatures}\n```\n\n{given}For example, this must hold:\n\n"
        f"```python\n{tests[0]}\n```\n\nHidden tests check this and other cases.\n"
    )
    raw_id = str(item["task_id"])
    spec = make_spec(
        tid=task_id("mbpp", raw_id),
        title=f"MBPP {raw_id}: {text.strip()}",
        instruction=instruction,
        family=Family.feature,
        difficulty=Difficulty.easy,
        options=options,
        tags=("mbpp",),
    )
    return TaskDraft(
        source_id=source_id,
        spec=spec,
        workspace={MODULE: workspace.encode()},
        tests={TEST_MODULE: hidden.encode()},
        solution={MODULE: code.encode()},
    )
