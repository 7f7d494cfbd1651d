"""Content checks for docs/cli.json: the truth is the argparse parser built by shipit/cli.py."""
import argparse
import importlib.util
import os
import sys

ACTIONS = {
    argparse._StoreAction: "store",
    argparse._StoreTrueAction: "store_true",
    argparse._StoreFalseAction: "store_false",
    argparse._CountAction: "count",
    argparse._AppendAction: "append",
}


def _parser():
    sys.dont_write_bytecode = True
    path = os.path.join(os.environ["ROLLBOX_WORKSPACE"], "shipit", "cli.py")
    spec = importlib.util.spec_from_file_location("_shipit_cli_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.build_parser()


def _jsonable(value):
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def _describe(parser):
    """(positionals, {dest: option}, subparsers_action_or_None)"""
    positionals, options, subs = [], {}, None
    for act in parser._actions:
        if isinstance(act, argparse._HelpAction):
            continue
        if isinstance(act, argparse._SubParsersAction):
            subs = act
            continue
        if not act.option_strings:
            nargs = act.nargs
            positionals.append({"name": act.dest, "nargs": nargs, "help": act.help})
            continue
        kind = ACTIONS[type(act)]
        takes_value = kind in ("store", "append")
        options[act.dest] = {
            "flags": list(act.option_strings),
            "dest": act.dest,
            "action": kind,
            "type": (act.type.__name__ if act.type else "str") if takes_value else None,
            "default": _jsonable(act.default),
            "choices": _jsonable(act.choices) if act.choices is not None else None,
            "required": bool(act.required),
            "help": act.help,
        }
    return positionals, options, subs


def _expected():
    parser = _parser()
    _, options, subs = _describe(parser)
    commands = {}
    for pseudo in subs._choices_actions:
        name = pseudo.dest
        sp = subs.choices[name]
        aliases = [n for n, p in subs.choices.items() if p is sp and n != name]
        pos, opts, _ = _describe(sp)
        commands[name] = {"aliases": aliases, "help": pseudo.help, "arguments": pos, "options": opts}
    return {"prog": parser.prog, "description": parser.description, "options": options, "commands": commands}


def _same(a, b):
    """JSON equality that does not treat true/false as 1/0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _doc_options(entries, where):
    assert isinstance(entries, list), f"{where}: options must be a list"
    out = {}
    for o in entries:
        assert isinstance(o, dict), f"{where}: bad option"
        assert o.get("dest") not in out, f"{where}: dest {o.get('dest')} listed twice"
        out[o.get("dest")] = o
    return out


def _doc_commands(doc):
    assert isinstance(doc, dict)
    cmds = doc.get("commands")
    assert isinstance(cmds, list), "commands must be a list"
    return {c.get("name"): c for c in cmds if isinstance(c, dict)}


def _option_pairs(doc):
    """(where, doc_options_by_dest, expected_options_by_dest) for the top level and every command."""
    exp = _expected()
    pairs = [("global", _doc_options(doc.get("options"), "global"), exp["options"])]
    cmds = _doc_commands(doc)
    for name, want in exp["commands"].items():
        assert name in cmds, f"command {name} missing"
        pairs.append((name, _doc_options(cmds[name].get("options"), name), want["options"]))
    return pairs


def _check_field(doc, field):
    for where, got, want in _option_pairs(doc):
        for dest, w in want.items():
            assert dest in got, f"{where}: option with dest {dest!r} missing"
            assert _same(got[dest].get(field), w[field]), f"{where} {w['flags']}: wrong {field}: {got[dest].get(field)!r}"


def check_program(doc):
    assert isinstance(doc, dict)
    exp = _expected()
    assert doc.get("prog") == exp["prog"], "wrong prog"
    assert doc.get("description") == exp["description"], "wrong description"


def check_command_set(doc):
    got = set(_doc_commands(doc))
    want = set(_expected()["commands"])
    assert got == want, f"commands are {sorted(got)}, expected other names (aliases are not commands)"


def check_aliases(doc):
    cmds = _doc_commands(doc)
    for name, want in _expected()["commands"].items():
        assert name in cmds, f"command {name} missing"
        assert sorted(cmds[name].get("aliases") or []) == sorted(want["aliases"]), f"{name}: wrong aliases"


def check_command_help(doc):
    cmds = _doc_commands(doc)
    for name, want in _expected()["commands"].items():
        assert name in cmds, f"command {name} missing"
        assert cmds[name].get("help") == want["help"], f"{name}: wrong help"


def check_positionals(doc):
    cmds = _doc_commands(doc)
    for name, want in _expected()["commands"].items():
        assert name in cmds, f"command {name} missing"
        got = cmds[name].get("arguments")
        assert isinstance(got, list), f"{name}: arguments must be a list"
        simplified = [{"name": a.get("name"), "nargs": a.get("nargs"), "help": a.get("help")} for a in got]
        assert simplified == want["arguments"], f"{name}: positional arguments are {simplified}"


def check_option_sets(doc):
    for where, got, want in _option_pairs(doc):
        assert set(got) == set(want), f"{where}: options documented by dest {sorted(map(str, got))}, expected {sorted(want)}"


def check_option_flags(doc):
    _check_field(doc, "flags")


def check_option_actions(doc):
    _check_field(doc, "action")


def check_option_types(doc):
    _check_field(doc, "type")


def check_option_defaults(doc):
    _check_field(doc, "default")


def check_option_choices(doc):
    _check_field(doc, "choices")


def check_option_required(doc):
    _check_field(doc, "required")


def check_option_help(doc):
    _check_field(doc, "help")
