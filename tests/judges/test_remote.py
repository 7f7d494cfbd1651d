"""The code under test in a process of its own (judges/remote.py): what crosses, and how.

A real server process (the judge's own file, started as the judge starts it, without the
sandbox) serves a small workspace written here; this test process plays the hidden tests.
"""

from __future__ import annotations

import concurrent.futures
import datetime
import decimal
import fractions
import pathlib
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from rollbox.judges import plain as plain_module
from rollbox.judges import remote
from rollbox.judges.isolation import SERVER, code_modules, server_files

CODE = """
import dataclasses, os, sys


class CalcError(ValueError):
    def __init__(self, msg, position=0):
        super().__init__(msg)
        self.position = position


class ParseError(CalcError):
    pass


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: int

    def norm(self):
        return abs(self.x) + abs(self.y)


class Box:
    def __init__(self):
        self.items = []
        self.seen_exc = "unset"

    def add(self, x):
        self.items.append(x)
        return self

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        self.seen_exc = None if kind is None else kind.__name__
        return False


class AlwaysEqual:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


THE_BOX = Box()


def echo(x):
    return x


def kind(x):
    return type(x).__name__


def parse(text):
    if text == "bad":
        raise ParseError("bad input", 3)
    return int(text)


def apply(f, x):
    return f(x) + 1


def count(n):
    yield from range(n)


def liar():
    return AlwaysEqual()


def steal(f):
    return f.__globals__


def peek(obj, name):
    return getattr(obj, name)


def die():
    os._exit(3)


def leave():
    sys.exit(0)


def big(n):
    return "x" * n


def tests_on_disk():
    return os.path.exists("/rollbox/judge/tests")
"""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Callable[[str], ModuleType]]:
    """Start the server on a workspace holding `CODE` as calc.py; yield an importer."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text(textwrap.dedent(CODE))
    sock = str(tmp_path / "code.sock")
    files = server_files(tmp_path / "remote")
    proc = subprocess.Popen(
        [sys.executable, str(files / SERVER), "serve", sock], cwd=ws, stdout=subprocess.PIPE
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == b"ready"
    saved = {n: sys.modules.get(n) for n in ("rollbox_judge_remote", "rollbox_judge_plain")}
    sys.modules["rollbox_judge_remote"] = remote  # as the judge's plugin has them
    sys.modules["rollbox_judge_plain"] = plain_module
    peer = remote.connect(sock)
    try:
        yield lambda name: peer.request("import", name)
    finally:
        peer.sock.close()
        proc.kill()
        proc.wait()
        for n, m in saved.items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m


VALUES = [
    None, True, 0, -(2**80), 1.5, float("inf"), "héllo", b"\x00\xff", bytearray(b"ab"),
    [1, [2, "x"]], (1, (2,)), {"a": 1, 2: [3]}, {1, 2}, frozenset({"z"}), 3 + 4j,
    decimal.Decimal("1.10"), fractions.Fraction(2, 3), range(1, 9, 2),
    datetime.date(2024, 2, 29), datetime.datetime(2024, 1, 1, 12, 30),
    datetime.datetime(2024, 1, 1, 12, tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
    datetime.timedelta(days=1, seconds=5), pathlib.Path("/tmp/x"), Ellipsis,
]  # fmt: skip


@pytest.mark.parametrize("value", VALUES, ids=[type(v).__name__ for v in VALUES])
def test_plain_values_cross_as_values_of_the_same_exact_type(
    served: Callable[[str], ModuleType], value: object
) -> None:
    calc = served("calc")
    back = calc.echo(value)
    assert type(back) is type(value)
    assert back == value
    assert calc.kind(value) == type(value).__name__


def test_objects_cross_by_reference_with_their_classes(
    served: Callable[[str], ModuleType],
) -> None:
    calc = served("calc")
    assert calc.THE_BOX is calc.THE_BOX, "one proxy per remote object"
    box = calc.Box()
    assert type(box) is calc.Box and isinstance(box, calc.Box)
    box.add(1).add(2)
    assert len(box) == 2 and list(box) == [1, 2]
    p = calc.Point(3, -4)
    assert (p.x, p.y, p.norm()) == (3, -4, 7)
    assert p == calc.Point(3, -4) and p != calc.Point(4, 3)
    assert hash(p) == hash(calc.Point(3, -4))
    assert list(calc.count(4)) == [0, 1, 2, 3]
    assert calc.apply(lambda v: v * 10, 4) == 41  # a callback of this process, called there


def test_exceptions_arrive_as_local_classes_with_their_bases(
    served: Callable[[str], ModuleType],
) -> None:
    calc = served("calc")
    with pytest.raises(calc.CalcError) as info:
        calc.parse("bad")
    assert type(info.value) is calc.ParseError
    assert isinstance(info.value, ValueError)
    assert str(info.value) == "bad input" and getattr(info.value, "position") == 3  # noqa: B009 - a remote attribute
    with pytest.raises(ValueError, match="invalid literal"):
        calc.parse("x")
    box = calc.Box()
    with pytest.raises(KeyError), box:
        raise KeyError("inside")
    assert box.seen_exc == "KeyError", "the context manager saw the exception"


def test_an_always_equal_object_equals_nothing_here(served: Callable[[str], ModuleType]) -> None:
    calc = served("calc")
    liar = calc.liar()
    assert not liar == 5  # noqa: SIM201 - the point is the == of the proxy
    assert liar != "anything"
    with pytest.raises(ValueError):
        [5, 7].index(liar)
    assert liar not in (5, 7)
    assert plain_module.plain(liar) != plain_module.plain(5)


def test_values_are_copies(served: Callable[[str], ModuleType]) -> None:
    calc = served("calc")
    data = [1, 2]
    back = calc.echo(data)
    back.append(3)
    assert data == [1, 2] and back is not data


def test_the_code_under_test_cannot_reach_into_this_process(
    served: Callable[[str], ModuleType],
) -> None:
    calc = served("calc")

    def callback(x: int) -> int:
        return x

    with pytest.raises(PermissionError):
        calc.steal(callback)  # f.__globals__: a private attribute of a function
    with pytest.raises(PermissionError):
        calc.peek(callback, "anything")  # no attribute of a function at all
    with pytest.raises(TypeError, match="module"):
        calc.echo(sys)  # a module is never handed over
    assert calc.tests_on_disk() is False


def test_a_process_that_dies_fails_every_later_call(served: Callable[[str], ModuleType]) -> None:
    calc = served("calc")
    with pytest.raises(remote.RemoteDied):
        calc.die()
    with pytest.raises(remote.RemoteDied):
        calc.echo(1)


def test_sys_exit_in_a_call_is_an_error_not_an_exit(served: Callable[[str], ModuleType]) -> None:
    calc = served("calc")
    with pytest.raises(remote.RemoteExit):
        calc.leave()
    assert calc.echo(2) == 2


def test_a_forged_reply_is_an_error(served: Callable[[str], ModuleType]) -> None:
    """The code under test rewrites its server's replies: what arrives is checked, and naming
    an object of this process that was never handed over is refused."""
    calc = served("calc")
    calc.echo(1)
    peer = calc.__dict__["_rb_remote"]._rb_peer
    for forged in (
        {"$t": "yours", "id": 999_999},
        {"$t": "builtin", "v": "eval"},
        {"$t": "no-such-tag"},
        {"$t": "method", "obj": 5, "name": "x"},
        {"$t": "boundmethod", "obj": 5, "name": "x"},
    ):
        with pytest.raises(remote.RemoteError):
            peer.decode(forged)


def test_code_modules_leave_out_test_and_judge_names(tmp_path: Path) -> None:
    ws, tests = tmp_path / "ws", tmp_path / "tests"
    for d in (ws / "pkg", ws / "data", tests):
        d.mkdir(parents=True)
    for rel in ("calc.py", "pkg/__init__.py", "conftest.py", "test_x.py", "helper.py",
                "json.py", "rollbox_judge_plain.py", "data/x.csv", "not-a-name.py"):  # fmt: skip
        (ws / rel).write_text("")
    (tests / "helper.py").write_text("")
    assert code_modules(ws, tests) == ["calc", "pkg"]


def test_star_import_and_module_attributes(served: Callable[[str], ModuleType]) -> None:
    calc = served("calc")
    names = calc.__all__  # calc.py has no __all__: its public names, as `import *` takes them
    assert "parse" in names and "Box" in names and not any(n.startswith("_") for n in names)
    assert not hasattr(calc, "__path__"), "a module, not a package"
    calc.answer = 42
    assert calc.echo(calc.answer) == 42


def test_messages_over_the_size_limit_are_errors_both_ways(
    served: Callable[[str], ModuleType],
) -> None:
    calc = served("calc")
    with pytest.raises(remote.RemoteError, match="over the limit"):
        calc.echo("x" * (remote.MAX_MESSAGE + 10))  # the request
    with pytest.raises(remote.RemoteError, match="over the limit"):
        calc.big(remote.MAX_MESSAGE + 10)  # the reply
    assert calc.echo("still here") == "still here"


def test_the_code_is_used_from_one_thread_only(served: Callable[[str], ModuleType]) -> None:
    """Calls from another thread are refused (serializing them would hide the concurrency a
    threaded test means to exercise)."""
    calc = served("calc")
    with (
        concurrent.futures.ThreadPoolExecutor(1) as pool,
        pytest.raises(RuntimeError, match="in-process"),
    ):
        pool.submit(calc.echo, 1).result()
    assert calc.echo(1) == 1
