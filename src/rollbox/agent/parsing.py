"""Tool calls written as text, for policies without native tool calling.

A small model (the bundled SmolLM2-135M has no tool calling) is told the tools as text
(`render_tools_prompt`) and its reply is read back into the same ToolCall a native call gives
(`parse_action`, `action_from_completion`). Two forms are read; docs/tool-format.md is the
user's page:

    tags   <bash>ls -la</bash>   <read_file path="m.py"/>   <submit/>
           <write_file path="m.py">...content...</write_file>
           <edit path="m.py"><old>...</old><new>...</new></edit>
    JSON   <tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>

In a tag, attributes and `<param>` child elements give arguments by name; the text between the
tags goes to the first required text argument not given otherwise. Reading is tolerant: tag
and tool names in any case, a missing final closing tag, a ``` fence around a body or the
JSON, single quotes and trailing commas in the JSON, "parameters" for "arguments", numbers
written as strings. The first call in the text wins; `<think>...</think>` is skipped. When no
call can be read, the message says why, briefly, for the model to read.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rollbox.agent.tools import function_of
from rollbox.agent.types import Action, Completion, ToolCall

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_ATTR = re.compile(
    r"""\s*([A-Za-z_][\w.-]*)\s*=\s*"""  # name =
    r"""(?:"([^"]*)"|'([^']*)'|((?:[^\s"'=<>`/]|/(?!\s*>))+))"""  # "v", 'v' or v
)
_OPEN_END = re.compile(r"\s*(/?)\s*>")
_CHILD = re.compile(r"\s*<\s*([A-Za-z_][\w-]*)\s*>")
_FENCE = re.compile(r"\A\s*```[^\n`]*\n(.*?)[ \t]*```\s*\Z", re.S)
_OPEN_FENCE = re.compile(r"\A\s*```[^\n`]*\n")
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_BARE_JSON = re.compile(r"""\{\s*["']name["']\s*:""")
_ANY_TAG = re.compile(r"<\s*([A-Za-z_][\w-]*)((?:\s[^<>]*)?)>")
_ARG_KEYS = ("arguments", "parameters", "args", "input")
_DECODER = json.JSONDecoder(strict=False)  # raw line breaks inside strings are common


@dataclass(frozen=True)
class _Param:
    name: str
    type: str
    required: bool


@dataclass(frozen=True)
class _Tool:
    name: str
    description: str
    params: tuple[_Param, ...]

    def param(self, name: str) -> _Param | None:
        low = name.lower()
        return next((p for p in self.params if p.name.lower() == low), None)

    def layout(self) -> tuple[list[_Param], _Param | None, list[_Param]]:
        """How the prompt writes the tool: (attributes, body, child elements). The only
        argument, if text, is the body; otherwise the first required text argument is an
        attribute, and the other required text arguments the body (one) or children (more)."""
        texts = [p for p in self.params if p.required and p.type == "string"]
        if len(self.params) == 1 and texts:
            return [], texts[0], []
        others = [p for p in self.params if p.required and p.type != "string"]
        if not texts:
            return others, None, []
        rest = texts[1:]
        if len(rest) == 1:
            return [texts[0], *others], rest[0], []
        return [texts[0], *others], None, rest

    def template(self) -> str:
        attrs, body, children = self.layout()
        a = "".join(f' {p.name}="..."' for p in attrs)
        if body is not None:
            return f"<{self.name}{a}>{body.name}</{self.name}>"
        if children:
            inner = "".join(f"<{c.name}>...</{c.name}>" for c in children)
            return f"<{self.name}{a}>{inner}</{self.name}>"
        return f"<{self.name}{a}/>"


@dataclass(frozen=True)
class _Parsed:
    call: ToolCall | None
    error: str | None
    complete: bool = True  # the call's closing tag was there (not cut off by the end of text)


def _tools(schemas: Sequence[Mapping[str, Any]]) -> dict[str, _Tool]:
    out = {}
    for schema in schemas:
        fn = function_of(schema)
        params = fn.get("parameters") or {}
        required = set(params.get("required") or ())
        props = params.get("properties") or {}
        ps = tuple(_Param(n, str(p.get("type", "string")), n in required) for n, p in props.items())
        out[fn["name"].lower()] = _Tool(fn["name"], str(fn.get("description", "")), ps)
    return out


# ---------------------------------------------------------------------------------------------
# The prompt


def render_tools_prompt(schemas: Sequence[Mapping[str, Any]]) -> str:
    """The tools and the call format, as compact text for the system prompt."""
    tools = list(_tools(schemas).values())
    lines = [
        "Call one tool per reply, written as a tag: arguments as attributes, the main text "
        "between the tags. Only the first call runs; its result comes next.",
        "Tools:",
    ]
    for t in tools:
        attrs, body, children = t.layout()
        shown = {p.name for p in [*attrs, *children]} | ({body.name} if body else set())
        optional = [f"{p.name} ({p.type})" for p in t.params if p.name not in shown]
        extra = f" Optional attributes: {', '.join(optional)}." if optional else ""
        lines.append(f"{t.template()}\n  {t.description}{extra}")
    if tools:
        first = tools[0]
        args = ", ".join(f'"{p.name}": "..."' for p in first.params if p.required)
        lines.append(
            f'JSON also works: <tool_call>{{"name": "{first.name}", "arguments": {{{args}}}}}'
            "</tool_call>"
        )
    return "\n".join(lines)


def stop_sequences(schemas: Sequence[Mapping[str, Any]]) -> list[str]:
    """Closing tags after which a reply may stop (Policy.complete keeps the stop in the text)."""
    return ["</tool_call>", *(f"</{t.name}>" for t in _tools(schemas).values())]


# ---------------------------------------------------------------------------------------------
# Parsing


def parse_action(
    text: str, schemas: Sequence[Mapping[str, Any]]
) -> tuple[ToolCall | None, str | None]:
    """The first tool call in `text`, or None and a message (for the model) saying why not."""
    parsed = _parse(text, schemas)
    return parsed.call, parsed.error


def action_from_completion(completion: Completion, schemas: Sequence[Mapping[str, Any]]) -> Action:
    """The Action a completion amounts to: its first native tool call, else the call parsed from
    its text. A call whose closing tag is missing because the reply hit the length limit is not
    run (its last argument is probably cut short)."""
    call: ToolCall | None
    native = bool(completion.tool_calls)
    if native:
        call, error = completion.tool_calls[0], None
    else:
        parsed = _parse(completion.text, schemas)
        call, error = parsed.call, parsed.error
        if completion.finish_reason == "length":
            if call is not None and not parsed.complete:
                error = (
                    f"Your reply hit the length limit inside the {call.name} call, so it was "
                    "not run. Make the call shorter (write a long file in parts, say)."
                )
                call = None
            elif call is None:
                error = f"Your reply hit the length limit. {error}"
    return Action(
        text=completion.text,
        tool_call=call,
        parse_error=error,
        native=native,
        token_ids=completion.token_ids,
        logprobs=completion.logprobs,
        prompt_tokens=completion.prompt_tokens,
        completion_tokens=completion.completion_tokens,
        finish_reason=completion.finish_reason,
    )


def _parse(text: str, schemas: Sequence[Mapping[str, Any]]) -> _Parsed:
    tools = _tools(schemas)
    text = _THINK.sub(lambda m: " " * len(m.group()), text)
    names = "|".join(re.escape(n) for n in sorted(tools, key=len, reverse=True))
    opening = re.compile(rf"<\s*(tool_call{'|' + names if names else ''})(?=[\s/>]|\Z)", re.I)
    starts = [(m.start(), m) for m in opening.finditer(text)]
    starts += [(m.start(), m) for m in _BARE_JSON.finditer(text)]
    pending: str | None = None  # why a would-be call was passed over, if nothing better comes
    for _, m in sorted(starts, key=lambda s: s[0]):
        result: _Parsed | str | None
        if m.re is _BARE_JSON:
            result = _parse_bare_json(text, m.start(), tools)
        elif m.group(1).lower() == "tool_call":
            result = _parse_json_tag(text, m, tools)
        else:
            result = _parse_tag(text, m, tools[m.group(1).lower()])
        if isinstance(result, _Parsed):
            return result
        pending = pending or result
    if pending is not None:
        return _Parsed(None, pending)
    unknown = _unknown_tag(text, tools)
    if unknown is not None:
        return _Parsed(None, f"Unknown tool <{unknown}>. {_listing(tools)}")
    return _Parsed(None, _no_call(tools))


def _listing(tools: Mapping[str, _Tool]) -> str:
    if not tools:
        return "No tools are available."
    return f"The tools are: {', '.join(t.name for t in tools.values())}."


def _no_call(tools: Mapping[str, _Tool]) -> str:
    if not tools:
        return "No tool call found, and no tools are available."
    first = next(iter(tools.values()))
    done = " When you are done: <submit/>." if "submit" in tools else ""
    return (
        f"No tool call found. Write one call as a tag, e.g. {first.template()}.{done} "
        f"{_listing(tools)}"
    )


def _unknown_tag(text: str, tools: Mapping[str, _Tool]) -> str | None:
    """The first tag that looks like a call of a tool that does not exist."""
    for m in _ANY_TAG.finditer(text):
        name = m.group(1)
        if name.lower() in tools or name.lower() in ("think", "tool_call"):
            continue
        closed = re.search(rf"<\s*/\s*{re.escape(name)}\s*>", text[m.end() :], re.I)
        if m.group(2).rstrip().endswith("/") or closed:
            return name
    return None


# -- the JSON form --------------------------------------------------------------------------


def _parse_json_tag(text: str, m: re.Match[str], tools: Mapping[str, _Tool]) -> _Parsed | str:
    gt = text.find(">", m.end())
    start = len(text) if gt < 0 else gt + 1
    close = re.compile(r"<\s*/\s*tool_call\s*>", re.I).search(text, start)
    body = text[start : close.start() if close else len(text)]
    opened = _OPEN_FENCE.match(body)
    inner = body[opened.end() :] if opened else body
    if not inner.lstrip().startswith("{"):  # perhaps a tag inside: <tool_call><bash>...
        return f"<tool_call> must hold a JSON object. {_json_example(tools)}"
    obj, problem = _loads(inner.lstrip())
    if obj is None:
        return _Parsed(
            None, f"The JSON in <tool_call> could not be read ({problem}). {_json_example(tools)}"
        )
    return _from_json(obj, tools)


def _parse_bare_json(text: str, start: int, tools: Mapping[str, _Tool]) -> _Parsed | None:
    """A JSON call without the <tool_call> tag: taken only when it names a tool."""
    obj, _ = _loads(text[start:])
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        return None
    if obj["name"].strip().lower() not in tools:
        return None
    return _from_json(obj, tools)


def _json_example(tools: Mapping[str, _Tool]) -> str:
    name = next(iter(tools.values())).name if tools else "name"
    return f'Write: <tool_call>{{"name": "{name}", "arguments": {{...}}}}</tool_call>'


def _from_json(obj: Any, tools: Mapping[str, _Tool]) -> _Parsed:
    if not isinstance(obj, dict):
        return _Parsed(None, f"The tool call must be a JSON object. {_json_example(tools)}")
    fn = obj["function"] if isinstance(obj.get("function"), dict) else obj
    name = fn.get("name")
    if not isinstance(name, str) or not name.strip():
        return _Parsed(None, f'The tool call needs a "name". {_json_example(tools)}')
    tool = tools.get(name.strip().lower())
    if tool is None:
        return _Parsed(None, f"Unknown tool {name!r}. {_listing(tools)}")
    args = next((fn[k] for k in _ARG_KEYS if k in fn), None)
    if isinstance(args, str) and args.strip():
        args, why = _loads(args)
        if args is None:
            return _Parsed(None, f'"arguments" of {tool.name} could not be read ({why}).')
    if args is None or args == "":
        args = {}
    if not isinstance(args, dict):
        return _Parsed(None, f'"arguments" of {tool.name} must be a JSON object of arguments.')
    coerced, problem = _coerce(tool, args)
    if problem is not None:
        return _Parsed(None, problem)
    return _Parsed(ToolCall(name=tool.name, arguments=coerced), None)


def _loads(s: str) -> tuple[Any, str]:
    """The JSON value at the start of `s` (what follows it is ignored), forgiving single
    quotes, trailing commas and Python literals; (None, the problem) when it cannot be read."""
    try:
        return _DECODER.raw_decode(s)[0], ""
    except json.JSONDecodeError as e:
        problem = f"{e.msg} at line {e.lineno} column {e.colno}"
    end = _balanced_end(s)
    chunk = _TRAILING_COMMA.sub(r"\1", s[:end] if end else s.rstrip().rstrip("`").rstrip())
    try:
        return _DECODER.decode(chunk), ""
    except ValueError:
        pass
    try:
        return ast.literal_eval(chunk), ""
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None, problem


def _balanced_end(s: str) -> int | None:
    """Where the bracketed value at the start of `s` ends (strings of either quote skipped)."""
    depth, quote, escaped = 0, "", False
    for i, ch in enumerate(s):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


# -- the tag form ---------------------------------------------------------------------------


def _parse_tag(text: str, m: re.Match[str], tool: _Tool) -> _Parsed | str:
    attrs, pos, end = _attributes(text, m.end())
    if end is None:
        snippet = text[m.start() : m.start() + 40].split("\n")[0]
        return f"Could not read the tag {snippet!r}: write {tool.template()}"
    args: dict[str, str] = {}
    for key, value in attrs:
        p = tool.param(key)
        args[p.name if p else key] = value
    complete = end != "eof"
    if end == ">":
        close = re.compile(rf"<\s*/\s*{re.escape(tool.name)}\s*>", re.I).search(text, pos)
        complete = close is not None
        body = text[pos : close.start() if close else len(text)]
        children, rest, children_complete = _children(body, tool)
        complete = complete and children_complete
        for name, value in children:
            args[name] = value
        problem = _place_body(tool, args, _clean(rest), explicit=complete and not children)
        if problem is not None:
            return _Parsed(None, problem, complete)
    problem = _check_tag_args(tool, args)
    if problem is not None:
        return _Parsed(None, problem, complete)
    coerced, problem = _coerce(tool, args)
    if problem is not None:
        return _Parsed(None, problem, complete)
    return _Parsed(ToolCall(name=tool.name, arguments=coerced), None, complete)


def _attributes(text: str, pos: int) -> tuple[list[tuple[str, str]], int, str | None]:
    """The attributes of an opening tag from `pos`: (attributes, end position, how it ended:
    "/>", ">", "eof", or None when it cannot be read)."""
    attrs = []
    while True:
        m = _ATTR.match(text, pos)
        if m is None:
            break
        value = next(g for g in m.groups()[1:] if g is not None)
        attrs.append((m.group(1).lower(), value))
        pos = m.end()
    end = _OPEN_END.match(text, pos)
    if end is not None:
        return attrs, end.end(), "/>" if end.group(1) else ">"
    if not text[pos:].strip():
        return attrs, len(text), "eof"
    return attrs, pos, None


def _children(body: str, tool: _Tool) -> tuple[list[tuple[str, str]], str, bool]:
    """Leading `<param>...</param>` elements of a body: (children, the rest, all closed?)."""
    children: list[tuple[str, str]] = []
    pos = 0
    while True:
        m = _CHILD.match(body, pos)
        p = tool.param(m.group(1)) if m else None
        if m is None or p is None:
            break
        close = re.compile(rf"<\s*/\s*{re.escape(m.group(1))}\s*>", re.I).search(body, m.end())
        children.append((p.name, _clean(body[m.end() : close.start() if close else len(body)])))
        if close is None:
            return children, "", False
        pos = close.end()
    return children, body[pos:], True


def _place_body(tool: _Tool, args: dict[str, str], body: str, *, explicit: bool) -> str | None:
    """Give the text between the tags to the first text argument not yet given."""
    unset = [p for p in tool.params if p.type == "string" and p.name not in args]
    target = next((p for p in unset if p.required), unset[0] if unset else None)
    if not body.strip():
        if explicit and target is not None and target.required:
            args[target.name] = body.strip()  # <write_file path="x"></write_file>: empty
        return None
    if target is None:
        if not tool.params:
            return None  # <submit>some words</submit>: nothing to give them to
        return (
            f"<{tool.name}> has text between its tags but no argument left for it. "
            f"Write {tool.template()}"
        )
    args[target.name] = body
    return None


def _check_tag_args(tool: _Tool, args: Mapping[str, str]) -> str | None:
    problems = [f"unknown argument {k!r}" for k in args if tool.param(k) is None]
    problems += [f"missing {p.name!r}" for p in tool.params if p.required and p.name not in args]
    if not problems:
        return None
    optional = [p.name for p in tool.params if not p.required]
    also = f" (optional: {', '.join(optional)})" if optional else ""
    return f"<{tool.name}>: {'; '.join(problems)}. Write {tool.template()}{also}"


def _clean(value: str) -> str:
    """A body as meant: a ``` fence around it removed, else one leading line break; the
    indentation of the closing tag's line dropped."""
    fenced = _FENCE.match(value)
    if fenced:
        return fenced.group(1)
    opened = _OPEN_FENCE.match(value)
    if opened:  # a fence whose end was cut off
        value = value[opened.end() :]
    elif value.startswith("\r\n"):
        value = value[2:]
    elif value.startswith("\n"):
        value = value[1:]
    return re.sub(r"\n[ \t]+\Z", "\n", value)


def _coerce(tool: _Tool, args: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """Arguments written as text made the types the schema asks for ("10" for an integer)."""
    out = dict(args)
    for key, value in args.items():
        p = tool.param(key)
        if p is None or not isinstance(value, str) or p.type == "string":
            continue
        converted = _convert(value.strip(), p.type)
        if converted is None:
            return out, (
                f"{tool.name}: argument {p.name!r} must be {_article(p.type)}, got {value!r}."
            )
        out[key] = converted
    return out, None


def _convert(value: str, json_type: str) -> Any:
    try:
        if json_type == "integer":
            return int(value)
        if json_type == "number":
            return float(value)
    except ValueError:
        return None
    if json_type == "boolean":
        return {"true": True, "false": False}.get(value.lower())
    if json_type in ("object", "array"):
        return _loads(value)[0]
    return value


def _article(json_type: str) -> str:
    return f"an {json_type}" if json_type[:1] in ("a", "e", "i", "o", "u") else f"a {json_type}"
