"""The tools an agent uses in an episode, and the box that runs them.

    ToolBox(sandbox, task).schemas()   -> OpenAI-style function schemas, shown to the policy
    await ToolBox(...).run(ToolCall)   -> Observation, what the model reads next

The tools: `bash` (a persistent shell), `read_file`, `write_file`, `edit` (exact string
replace), `list_dir`, `run_tests` (the task's visible tests only) and `submit`.

They act as the agent would: inside the sandbox, through `exec` and the persistent shell, on
paths relative to the workspace. Every mistake of the policy (an unknown tool, a missing or
mistyped argument, a file that is not there, an ambiguous edit) comes back as an Observation
with `is_error=True` whose text says what was wrong; only the machinery's failures
(SandboxError) propagate. Long output is cut to a head and a tail with a marker between
(`truncate`), so that no observation can flood the context.

The visible tests are copied for each `run_tests` into a private directory under the sandbox's
/tmp, never into the workspace: the judge compares the workspace with the pristine one and
counts test files there as tampering.
"""

from __future__ import annotations

import difflib
import io
import posixpath
import re
import secrets
import tarfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rollbox.agent.types import Observation, ToolCall
from rollbox.errors import SandboxError
from rollbox.sandbox.base import ExecResult, Sandbox, inside_workspace
from rollbox.sandbox.fsutil import kind_beneath
from rollbox.sandbox.shell import ShellSession
from rollbox.tasks.loader import read_tree
from rollbox.tasks.model import Task

DEFAULT_OBSERVATION_CHARS = 4000  # what one observation may hold, marker included
FILE_TIMEOUT_S = 30.0  # for the small commands behind the file tools
READ_MAX_BYTES = 1 << 20  # read_file and edit refuse larger files (bash can still page them)
LIST_DEPTH = 2
SHELL_OUTPUT_BYTES = 1 << 20  # a shell the box makes keeps this much output (head and tail) to cut
TESTS_INI = "[pytest]\naddopts =\npython_files = test_*.py *_test.py\n"

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list, tuple),
}


class ToolFailure(Exception):
    """A tool could not do what the policy asked; the message is for the model."""


# ---------------------------------------------------------------------------------------------
# Tool descriptions


@dataclass(frozen=True)
class Param:
    """One argument of a tool."""

    name: str
    type: str  # a JSON-schema type: "string", "integer", ...
    description: str
    required: bool = True
    minimum: int | None = None


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the policy is told about it."""

    name: str
    description: str
    params: tuple[Param, ...] = ()

    def schema(self) -> dict[str, Any]:
        """The OpenAI function schema."""
        props: dict[str, Any] = {}
        for p in self.params:
            prop: dict[str, Any] = {"type": p.type, "description": p.description}
            if p.minimum is not None:
                prop["minimum"] = p.minimum
            props[p.name] = prop
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": props,
                    "required": [p.name for p in self.params if p.required],
                    "additionalProperties": False,
                },
            },
        }


_PATH = Param("path", "string", "File path, relative to the workspace root.")
TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "bash",
        "Run a shell command in the workspace. The shell persists between calls (cd, exports).",
        (Param("command", "string", "The command line to run."),),
    ),
    ToolSpec(
        "read_file",
        "Read a text file.",
        (
            _PATH,
            Param("offset", "integer", "First line to show (1-based).", False, 1),
            Param("limit", "integer", "How many lines to show.", False, 1),
        ),
    ),
    ToolSpec(
        "write_file",
        "Write a whole file (its directories are created).",
        (_PATH, Param("content", "string", "The complete new content of the file.")),
    ),
    ToolSpec(
        "edit",
        "Replace the exact text `old`, which must occur once in the file, with `new`.",
        (
            _PATH,
            Param("old", "string", "Text to replace; must occur exactly once, spaces included."),
            Param("new", "string", "The replacement text."),
        ),
    ),
    ToolSpec(
        "list_dir",
        f"List a directory, {LIST_DEPTH} levels deep.",
        (Param("path", "string", "Directory relative to the workspace (default '.').", False),),
    ),
    ToolSpec("run_tests", "Run the task's visible tests (pytest)."),
    ToolSpec("submit", "Submit your work; this ends the episode."),
)


def function_of(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """The function part of a tool schema (`{"type": "function", "function": {...}}` or bare)."""
    fn = schema.get("function")
    return fn if isinstance(fn, Mapping) else schema


def _properties(fn: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    params = fn.get("parameters") or {}
    return dict(params.get("properties") or {}), list(params.get("required") or [])


def signature(schema: Mapping[str, Any]) -> str:
    """`edit(path, old, new)`, `read_file(path, offset?, limit?)`: a tool at a glance."""
    fn = function_of(schema)
    props, required = _properties(fn)
    args = [n if n in required else f"{n}?" for n in props]
    return f"{fn['name']}({', '.join(args)})"


def _typed_usage(fn: Mapping[str, Any]) -> str:
    props, required = _properties(fn)
    args = [f"{n}{'' if n in required else '?'}: {p.get('type', 'any')}" for n, p in props.items()]
    return f"{fn['name']}({', '.join(args)})"


def _type_ok(value: Any, json_type: str) -> bool:
    if json_type in ("integer", "number") and isinstance(value, bool):
        return False
    if json_type == "number" and isinstance(value, float):
        return True
    return isinstance(value, _JSON_TYPES.get(json_type, (object,)))


def check_call(call: ToolCall, schemas: Sequence[Mapping[str, Any]]) -> str | None:
    """What is wrong with a call against the schemas (a message for the model), or None."""
    fns = {function_of(s)["name"]: function_of(s) for s in schemas}
    fn = fns.get(call.name)
    if fn is None:
        listing = ", ".join(signature(s) for s in schemas)
        return f"Unknown tool {call.name!r}. The tools are: {listing}."
    props, required = _properties(fn)
    problems = [f"missing argument {n!r}" for n in required if n not in call.arguments]
    for name, value in call.arguments.items():
        prop = props.get(name)
        if prop is None:
            problems.append(f"unexpected argument {name!r}")
            continue
        want = str(prop.get("type", ""))
        if want and not _type_ok(value, want):
            got = "null" if value is None else type(value).__name__
            problems.append(f"argument {name!r} must be {_article(want)}, got {got} {value!r}")
        elif "minimum" in prop and isinstance(value, int | float) and value < prop["minimum"]:
            problems.append(f"argument {name!r} must be at least {prop['minimum']}")
    if not problems:
        return None
    return f"Invalid call of {call.name}: {'; '.join(problems)}. Usage: {_typed_usage(fn)}."


def _article(json_type: str) -> str:
    return f"an {json_type}" if json_type[0] in "aeiou" else f"a {json_type}"


# ---------------------------------------------------------------------------------------------
# Truncation


def truncate(text: str, limit_chars: int = DEFAULT_OBSERVATION_CHARS) -> tuple[str, bool]:
    """`text` cut to at most `limit_chars`: its head and tail, with a marker line between that
    says how much was cut. Cuts fall on line breaks where that loses little. (text, cut?)"""
    if len(text) <= limit_chars:
        return text, False
    most = len(str(len(text)))
    reserve = len(_marker(10**most - 1, 10**most - 1)) + 2
    budget = max(limit_chars - reserve, 0)
    head_n = budget // 2
    tail_n = budget - head_n
    head = text[:head_n]
    nl = head.rfind("\n")
    if nl >= head_n // 2:
        head = head[: nl + 1]
    tail = text[len(text) - tail_n :] if tail_n else ""
    nl = tail.find("\n")
    if 0 <= nl < tail_n // 2:
        tail = tail[nl + 1 :]
    cut = text[len(head) : len(text) - len(tail)]
    sep = "" if not head or head.endswith("\n") else "\n"
    return f"{head}{sep}{_marker(len(cut), cut.count(chr(10)))}\n{tail}", True


def _marker(chars: int, lines: int) -> str:
    return f"[... {chars} characters ({lines} lines) cut here ...]"


# ---------------------------------------------------------------------------------------------
# The box

_TESTS = """
rm -rf -- "$1" && mkdir -p -- "$1" && tar -xf - -C "$1" || exit 99
shift
exec "$@"
"""
_SHELL_PREFIX = re.compile(r"^(?:bash|[\w./-]+): (?:line \d+: )?")


class ToolBox:
    """The tools of one episode, bound to its sandbox and task.

    `shell` is the episode's persistent shell (one is made, and closed by `close`, when none is
    given). `observation_chars` caps each observation; `command_timeout_s` is the wall clock of
    one `bash` command (default: the task's timeout); `env` is given to the shell and to the
    visible tests; `tools` picks a subset of the tools by name, in the given order.
    """

    def __init__(
        self,
        sandbox: Sandbox,
        task: Task | None = None,
        *,
        shell: ShellSession | None = None,
        observation_chars: int = DEFAULT_OBSERVATION_CHARS,
        command_timeout_s: float | None = None,
        env: Mapping[str, str] | None = None,
        tools: Sequence[str] | None = None,
    ) -> None:
        if observation_chars < 200:
            raise ValueError("observation_chars must be at least 200")
        self.sandbox = sandbox
        self.task = task
        self.env = dict(env or {})
        self._own_shell = shell is None
        if shell is None:
            shell = ShellSession(sandbox, env=self.env, output_cap=SHELL_OUTPUT_BYTES)
        self.shell = shell
        self.observation_chars = observation_chars
        self.test_timeout_s = task.spec.limits.timeout_s if task is not None else 60.0
        self.command_timeout_s = command_timeout_s or self.test_timeout_s
        by_name = {t.name: t for t in TOOLS}
        names = list(tools) if tools is not None else list(by_name)
        unknown = [n for n in names if n not in by_name]
        if unknown:
            raise ValueError(f"unknown tools {unknown}; the tools are {list(by_name)}")
        self._specs = tuple(by_name[n] for n in names)
        self._schemas = [t.schema() for t in self._specs]
        self._handlers: dict[str, Callable[..., Awaitable[Observation]]] = {
            "bash": self._bash,
            "read_file": self._read_file,
            "write_file": self._write_file,
            "edit": self._edit,
            "list_dir": self._list_dir,
            "run_tests": self._run_tests,
            "submit": self._submit,
        }
        self._tests_dir = f"/tmp/rollbox-visible-tests-{secrets.token_hex(4)}"
        self._tests_tar: bytes | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self._specs)

    def schemas(self) -> list[dict[str, Any]]:
        """The tools as OpenAI function schemas (fresh copies)."""
        return [t.schema() for t in self._specs]

    async def run(self, call: ToolCall) -> Observation:
        """Run one call. The policy's mistakes are observations; SandboxError propagates."""
        problem = check_call(call, self._schemas)
        if problem is not None:
            return Observation(text=problem, is_error=True)
        try:
            obs = await self._handlers[call.name](**call.arguments)
        except ToolFailure as e:
            obs = Observation(text=f"{call.name} failed: {e}", is_error=True)
        text, cut = truncate(obs.text, self.observation_chars)
        return obs.model_copy(update={"text": text, "truncated": obs.truncated or cut})

    async def close(self) -> None:
        """Close the shell if this box made it; idempotent."""
        if self._own_shell:
            await self.shell.close()

    # -- paths and files ------------------------------------------------------------------

    def _path(self, path: str, *, directory: bool = False) -> str:
        """A workspace-relative path; the workspace's own absolute path is accepted too."""
        p = path.strip()
        root = self.sandbox.workdir.rstrip("/")
        if p == root:
            p = "."
        elif p.startswith(root + "/"):
            p = p[len(root) + 1 :]
        if not p:
            if directory:
                return "."
            raise ToolFailure("the path is empty: give a file path relative to the workspace")
        try:
            inside_workspace(p)
        except ValueError:
            raise ToolFailure(
                f"{path!r} is outside the workspace: give a path relative to the workspace "
                "root, without a leading '/' or '..'"
            ) from None
        return posixpath.normpath(p)

    # The file tools work on the workspace from the host, through the no-follow helpers
    # (a link the agent planted is refused, never followed): no process in the sandbox is
    # needed, which keeps a turn's overhead to a fraction of a millisecond.

    async def _kind(self, path: str) -> str | None:
        """What is at `path`; a link on the way is the agent's mistake, a workspace that is
        gone is the machinery's (SandboxError propagates)."""
        try:
            return kind_beneath(self.sandbox.workspace, path)
        except SandboxError as e:
            if "is gone" in str(e):
                raise
            raise ToolFailure(str(e).replace("'", "")) from None
        except NotADirectoryError:
            raise ToolFailure(f"{path}: a part of the path is a file, not a directory") from None

    async def _read_bytes(self, path: str) -> bytes:
        kind = await self._kind(path)
        why = {
            None: "no such file (paths are relative to the workspace; list_dir shows them)",
            "dir": "it is a directory (use list_dir)",
            "link": "it is a link; the file tools do not follow links (use bash)",
            "other": "not a regular file",
        }
        if kind in why:
            raise ToolFailure(f"{path}: {why[kind]}")
        try:
            return await self.sandbox.read_file(path, max_bytes=READ_MAX_BYTES)
        except SandboxError as e:
            if "larger than" in str(e):
                raise ToolFailure(
                    f"{path}: too large (over {READ_MAX_BYTES} bytes; read parts of it with bash)"
                ) from None
            raise ToolFailure(f"{path}: {e}") from None
        except OSError as e:
            raise ToolFailure(f"{path}: cannot read it ({e.strerror})") from None

    async def _write_bytes(self, path: str, data: bytes) -> str:
        """Write a file; 'created' or 'replaced'."""
        kind = await self._kind(path)
        if kind == "dir":
            raise ToolFailure(f"{path}: it is a directory")
        try:
            await self.sandbox.write_file(path, data)
        except SandboxError as e:
            raise ToolFailure(f"{path}: {e}") from None
        except NotADirectoryError:
            raise ToolFailure(f"{path}: a part of the path is a file, not a directory") from None
        except OSError as e:
            raise ToolFailure(f"{path}: cannot write it ({e.strerror})") from None
        return "created" if kind is None else "replaced"

    # -- the tools ---------------------------------------------------------------------------

    async def _bash(self, command: str) -> Observation:
        if not command.strip():
            raise ToolFailure("the command is empty")
        r = await self.shell.run(command, timeout_s=self.command_timeout_s)
        notes = []
        if r.restarted:
            notes.append(
                "[this ran in a new shell: the previous one had ended; the working directory "
                "was kept, variables were not]"
            )
        footer = f"[exit code {r.exit_code}]" if r.exit_code is not None else ""
        body = r.output.strip("\n") or "(no output)"
        if r.truncated:
            body += "\n[the rest of the output was dropped by the shell]"
        room = self.observation_chars - sum(len(n) + 1 for n in notes) - len(footer) - 1
        body, cut = truncate(body, max(room, 100))
        text = "\n".join([*notes, body, *([footer] if footer else [])])
        return Observation(
            text=text,
            is_error=r.timed_out,
            truncated=cut or r.truncated,
            exit_code=r.exit_code,
        )

    async def _read_file(self, path: str, offset: int = 1, limit: int | None = None) -> Observation:
        rel = self._path(path)
        data = await self._read_bytes(rel)
        if b"\0" in data[:8192]:
            raise ToolFailure(f"{rel}: a binary file ({len(data)} bytes); inspect it with bash")
        lines = data.decode("utf-8", "replace").splitlines(keepends=True)
        total = len(lines)
        if total == 0:
            return Observation(text=f"({rel} is empty)")
        if offset > total:
            raise ToolFailure(f"{rel} has {total} lines; offset {offset} is past its end")
        wanted = lines[offset - 1 : offset - 1 + limit if limit is not None else None]
        budget = self.observation_chars - 100
        shown: list[str] = []
        used = 0
        for line in wanted:
            if shown and used + len(line) > budget:
                break
            shown.append(line)
            used += len(line)
        last = offset - 1 + len(shown)
        text = "".join(shown)
        if offset > 1 or last < total:
            more = f"; to read on: offset={last + 1}" if last < total else ""
            sep = "" if text.endswith("\n") else "\n"
            text += f"{sep}[lines {offset}-{last} of {total}{more}]"
        return Observation(text=text, truncated=len(shown) < len(wanted))

    async def _write_file(self, path: str, content: str) -> Observation:
        rel = self._path(path)
        data = content.encode()
        what = await self._write_bytes(rel, data)
        n = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        return Observation(text=f"{what.capitalize()} {rel} ({n} lines, {len(data)} bytes).")

    async def _edit(self, path: str, old: str, new: str) -> Observation:
        rel = self._path(path)
        if not old:
            raise ToolFailure("`old` is empty: give the exact text to replace")
        if old == new:
            raise ToolFailure("`old` and `new` are the same: nothing would change")
        try:
            text = (await self._read_bytes(rel)).decode("utf-8")
        except UnicodeDecodeError:
            raise ToolFailure(f"{rel} is not UTF-8 text; use write_file or bash") from None
        starts = _occurrences(text, old)
        if not starts:
            raise ToolFailure(f"`old` was not found in {rel}. {_hint(text, old)}")
        if len(starts) > 1:
            at = ", ".join(str(text.count("\n", 0, s) + 1) for s in starts)
            raise ToolFailure(
                f"`old` occurs {len(starts)} times in {rel} (at lines {at}); include more "
                "of the surrounding lines in `old` so that it matches exactly once"
            )
        start = starts[0]
        await self._write_bytes(rel, (text[:start] + new + text[start + len(old) :]).encode())
        first = text.count("\n", 0, start) + 1
        if not new:
            return Observation(text=f"Edited {rel}: removed the text at line {first}.")
        span = new.count("\n") + (0 if new.endswith("\n") else 1)
        where = (
            f"line {first} now holds" if span == 1 else f"lines {first}-{first + span - 1} now hold"
        )
        return Observation(text=f"Edited {rel}: {where} the new text.")

    async def _list_dir(self, path: str = ".") -> Observation:
        rel = self._path(path, directory=True)
        kind = await self._kind(rel)
        if kind is None:
            raise ToolFailure(f"{rel}: no such directory")
        if kind != "dir":
            raise ToolFailure(f"{rel} is a file, not a directory (use read_file)")
        try:
            entries = await self.sandbox.list(rel)
        except (SandboxError, OSError) as e:
            raise ToolFailure(f"{rel}: {e}") from None
        base = "" if rel in (".", "") else rel.rstrip("/") + "/"
        rows = []
        for entry in entries:
            name = entry.path[len(base) :]
            parts = name.split("/")
            if len(parts) > LIST_DEPTH or any(p in (".git", "__pycache__") for p in parts[:-1]):
                continue
            if entry.kind == "dir":
                rows.append(f"{name}/")
            elif entry.kind == "link":
                rows.append(f"{name}@ (link)")
            elif entry.kind == "file":
                rows.append(f"{name} ({entry.size} bytes)")
            else:
                rows.append(f"{name} (special file)")
        where = "the workspace root" if rel == "." else rel
        if not rows:
            return Observation(text=f"{where} is empty.")
        return Observation(text=f"{where}:\n" + "\n".join(rows))

    async def _run_tests(self) -> Observation:
        task = self.task
        vdir = task.visible_tests_dir if task is not None else None
        if task is None or vdir is None:
            return Observation(
                text="This task has no visible tests. Check your work another way (run the "
                "code with bash); hidden tests judge it after you submit."
            )
        if self._tests_tar is None:
            files = {**read_tree(vdir), "pytest.ini": TESTS_INI.encode()}
            self._tests_tar = _tar(files)
        d = self._tests_dir
        argv = ["python", "-m", "pytest", "-q", "--tb=short", "--no-header",
                "-p", "no:cacheprovider", "-c", f"{d}/pytest.ini", f"--rootdir={d}", d]  # fmt: skip
        path = ":".join(p for p in (self.sandbox.workdir, self.env.get("PYTHONPATH")) if p)
        env = self.env | {
            "PYTHONPATH": path,
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }
        res = await self.sandbox.exec(
            ["bash", "-c", _TESTS, "rollbox", d, *argv],
            stdin=self._tests_tar,
            env=env,
            timeout_s=self.test_timeout_s,
        )
        if res.exit_code == 99:
            raise ToolFailure(f"could not copy the visible tests into {d}: {_shell_error(res)}")
        out = (res.stdout + ("\n" if res.stdout and res.stderr else "") + res.stderr).strip()
        if res.timed_out:
            footer = f"[the tests timed out after {self.test_timeout_s:g}s]"
        elif res.exit_code is None:
            footer = f"[pytest was killed by signal {res.signal}]"
        else:
            footer = f"[exit code {res.exit_code}: {_PYTEST_EXIT.get(res.exit_code, 'error')}]"
        header = f"$ pytest {d}  (the task's visible tests; hidden tests judge your work)"
        room = self.observation_chars - len(header) - len(footer) - 2
        body, cut = truncate(out or "(no output)", max(room, 100))
        return Observation(
            text=f"{header}\n{body}\n{footer}",
            is_error=res.timed_out,
            truncated=cut,
            exit_code=res.exit_code,
        )

    async def _submit(self) -> Observation:
        return Observation(text="Submitted: the episode ends here.", submitted=True)


_PYTEST_EXIT = {
    0: "all visible tests passed",
    1: "some tests failed",
    2: "interrupted (an error while collecting the tests?)",
    3: "pytest's internal error",
    4: "pytest usage error",
    5: "no tests were collected",
}


def _occurrences(text: str, old: str) -> list[int]:
    """Start offsets of the non-overlapping occurrences of `old`."""
    out, i = [], text.find(old)
    while i >= 0:
        out.append(i)
        i = text.find(old, i + len(old))
    return out


def _hint(text: str, old: str) -> str:
    """Why `old` may have missed: whitespace, or the closest line of the file."""
    if " ".join(old.split()) in " ".join(text.split()):
        return (
            "It matches only if spaces and line breaks are ignored: copy the indentation and "
            "line breaks exactly (read_file shows them)."
        )
    wanted = next((ln.strip() for ln in old.splitlines() if ln.strip()), old.strip())
    lines = text.splitlines()
    stripped = [ln.strip() for ln in lines]
    close = difflib.get_close_matches(wanted, stripped, n=1, cutoff=0.5)
    if close:
        i = stripped.index(close[0])
        return f"The closest line is line {i + 1}: {lines[i]!r}. Use read_file to see the text."
    return "Use read_file to see the file's current text, and copy `old` from it exactly."


def _shell_error(res: ExecResult) -> str:
    """The last line of a helper's stderr, without bash's own prefix."""
    lines = [ln for ln in res.stderr.strip().splitlines() if ln.strip()]
    if not lines:
        return f"failed (exit {res.exit_code})"
    return _SHELL_PREFIX.sub("", lines[-1])


def _tar(files: Mapping[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for rel, data in files.items():
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()
