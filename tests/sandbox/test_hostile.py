"""Hostile code against the bwrap sandbox, resource classes of THREATS.md part A.

fork / thread bombs, memory bombs, disk and inode filling, endless output, endless loops and
sleeping past the limit, starving the neighbours. Each test checks that the machinery survived
(or failed with a documented SandboxError), that the result says what happened, that the host
is untouched, and that the next sandbox is clean; the `sandboxes` fixture closes every sandbox
and checks that nothing of it is left on the host (see test_hostile_support.py).

The isolation classes are in test_hostile_isolation.py, processes that outlive the sandbox in
test_hostile_leftovers.py, links and `../` in files copied out in test_hostile_copyout.py.
"""

from __future__ import annotations

import asyncio
import resource
import signal
import time
from pathlib import Path

import pytest

from tests.sandbox.test_hostile_support import (
    Sandboxes,
    assert_next_sandbox_clean,
    describe,
    host_can_fork,
    needs_bwrap,
    new_marker,
    sandboxes,
)

__all__ = ["sandboxes"]  # the fixture, imported for pytest
pytestmark = [needs_bwrap, pytest.mark.timeout(120)]

MB = 1 << 20


async def _sample_group(sb: object, stop: asyncio.Event, every_s: float = 0.02) -> int:
    """The most processes seen in the sandbox's cgroup while `stop` is not set."""
    group = sb._group  # type: ignore[attr-defined]
    most = 0
    while not stop.is_set():
        most = max(most, len(group.procs()))
        await asyncio.sleep(every_s)
    return most


def _pids_limit_hits(sb: object) -> int | None:
    """How often the cgroup refused a fork (pids.events 'max'); None where not readable."""
    group = sb._group  # type: ignore[attr-defined]
    dirs = getattr(group, "dirs", None)
    path = Path(dirs["pids"]) if isinstance(dirs, dict) else Path(group.dir)
    try:
        for line in (path / "pids.events").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "max":
                return int(value)
    except OSError:
        return None
    return None


# ---- fork / thread bomb -------------------------------------------------------------------


@pytest.mark.slow
async def test_bash_fork_bomb_is_held_by_the_pids_limit(sandboxes: Sandboxes) -> None:
    marker = new_marker("fork")
    sb = await sandboxes.open(pids=64, wall_s=4)
    neighbour = await sandboxes.open(pids=64)  # same host uid, its own pids limit
    for box in (sb, neighbour):  # both fully started before the bomb goes off
        assert (await box.exec("true")).ok
    stop = asyncio.Event()
    sampler = asyncio.create_task(_sample_group(sb, stop))
    # the bomb, then `exec sleep` (no fork needed) so the command stays until the wall limit
    bomb = asyncio.create_task(
        sb.exec(
            f"echo {marker} > /tmp/{marker}; bomb() {{ bomb | bomb & }}; bomb; exec sleep 60",
            timeout_s=3,
        )
    )
    await asyncio.sleep(1.5)  # the bomb is at the limit by now
    # meanwhile: the host forks, and another sandbox of the same host user runs promptly
    assert host_can_fork() < 2.0
    t0 = time.monotonic()
    other = await neighbour.exec("echo neighbour ok", timeout_s=10)
    assert other.stdout == "neighbour ok\n" and other.ok, describe(other)
    assert time.monotonic() - t0 < 5.0, "a fork bomb in one sandbox slowed its neighbour down"
    res = await bomb
    stop.set()
    most = await sampler

    assert res.timed_out and res.signal == signal.SIGKILL and res.exit_code is None, describe(res)
    assert res.wall_s < 3 + 4, describe(res)
    assert most <= 64, f"{most} processes in a sandbox whose pids limit is 64"
    hits = _pids_limit_hits(sb)
    assert hits is None or hits > 0, "the bomb never reached the pids limit: not a bomb"
    # the kill took the whole bomb (one process group) with it: the sandbox works again
    after = await sb.exec("echo alive", timeout_s=10)
    assert after.ok and after.stdout == "alive\n", describe(after)
    assert host_can_fork() < 2.0
    await sandboxes.close_and_check(sb, marker)
    await assert_next_sandbox_clean(sandboxes, marker)


async def test_fork_bomb_left_running_in_the_background(sandboxes: Sandboxes) -> None:
    """The classic bomb returns at once and leaves its processes behind in the sandbox."""
    marker = new_marker("bg")
    sb = await sandboxes.open(pids=64, wall_s=5)
    res = await sb.exec(f":(){{ :|:& }};: ; : {marker}", timeout_s=5)  # every bomb process has it
    # the shell returns at once, or (when the bomb took every pid before the shell's own second
    # fork) is stuck retrying that fork and is killed at the wall limit: reported either way
    assert (res.exit_code == 0 and res.wall_s < 5) or res.timed_out, describe(res)
    assert res.wall_s < 5 + 3, describe(res)
    await asyncio.sleep(0.5)
    assert len(sb._group.procs()) <= 64  # type: ignore[attr-defined]
    assert host_can_fork() < 2.0
    # the sandbox either runs the next command or reports it as timed out: never hangs
    nxt = await sb.exec("echo alive", timeout_s=8)
    assert (nxt.ok and nxt.stdout == "alive\n") or nxt.timed_out, describe(nxt)
    assert nxt.wall_s < 8 + 3, describe(nxt)
    await sandboxes.close_and_check(sb, marker)  # close() kills the rest of the bomb
    await assert_next_sandbox_clean(sandboxes, marker)


THREADS_UNTIL_REFUSED = r"""
import os, sys, threading, time
n = 0
try:
    while True:
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        n += 1
except RuntimeError as e:  # "can't start new thread"
    print(n, flush=True)
    os._exit(3)
"""

THREADS_FOREVER = r"""
import threading, time
while True:
    try:
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
    except RuntimeError:
        pass
"""


async def test_python_thread_bomb_is_held_by_the_pids_limit(sandboxes: Sandboxes) -> None:
    sb = await sandboxes.open(pids=64, wall_s=5)
    res = await sb.exec(["python3", "-c", THREADS_UNTIL_REFUSED], timeout_s=10)
    # threads count as tasks: fewer than 64 started, the refusal reached the program as an error
    assert res.exit_code == 3 and not res.timed_out, describe(res)
    started = int(res.stdout.split()[0])
    assert 1 <= started < 64, describe(res)

    t0 = time.monotonic()
    res = await sb.exec(["python3", "-c", THREADS_FOREVER], timeout_s=2)
    assert res.timed_out and res.signal == signal.SIGKILL, describe(res)
    assert time.monotonic() - t0 < 2 + 4
    assert host_can_fork() < 2.0
    after = await sb.exec("echo alive")
    assert after.ok and after.stdout == "alive\n", describe(after)
    await sandboxes.close_and_check(sb)


# ---- memory bomb --------------------------------------------------------------------------


async def test_memory_bomb_is_reported_as_out_of_memory(sandboxes: Sandboxes) -> None:
    sb = await sandboxes.open(memory_mb=128, wall_s=20)
    one_go = await sb.exec(["python3", "-c", "x = bytearray(1 << 30); print(len(x))"])
    assert one_go.oom_killed and one_go.signal == signal.SIGKILL, describe(one_go)
    assert one_go.exit_code is None and not one_go.ok and not one_go.timed_out
    assert one_go.stdout == "", "the gigabyte was allocated after all"
    if one_go.peak_memory_kb is not None:
        assert one_go.peak_memory_kb <= 128 * 1024 + 1024, describe(one_go)

    growing = await sb.exec(["python3", "-c", "x = []\nwhile True: x.append(bytearray(1 << 20))"])
    assert growing.oom_killed and growing.signal == signal.SIGKILL, describe(growing)

    # the sandbox survives its bomb: the agent still answers, with memory to spare
    after = await sb.exec(["python3", "-c", "print(len(bytearray(32 << 20)))"])
    assert after.ok and after.stdout == f"{32 << 20}\n" and not after.oom_killed, describe(after)
    assert host_can_fork() < 2.0
    await sandboxes.close_and_check(sb)


@pytest.mark.slow
async def test_memory_bomb_in_a_background_process(sandboxes: Sandboxes) -> None:
    sb = await sandboxes.open(memory_mb=128, wall_s=20)
    res = await sb.exec(
        "python3 -c 'x = bytearray(1 << 30)' & bomb=$!; wait $bomb; echo bomb=$?; echo survived"
    )
    assert res.exit_code == 0 and "survived" in res.stdout, describe(res)
    assert "bomb=137" in res.stdout, describe(res)  # SIGKILL, from the kernel
    assert res.oom_killed, "an out-of-memory kill in the sandbox went unreported"

    # many middling processes: the kernel kills some, the agent (PID 1) is not among them
    res = await sb.exec(
        "for i in $(seq 12); do "
        "python3 -c 'import time; x = bytearray(24 << 20); time.sleep(3)' & done; wait; "
        "echo done",
        timeout_s=20,
    )
    assert res.oom_killed and "done" in res.stdout and not res.timed_out, describe(res)
    after = await sb.exec("echo alive")
    assert after.ok and after.stdout == "alive\n", describe(after)
    await sandboxes.close_and_check(sb)


# ---- disk or inode filling ----------------------------------------------------------------

WRITE_UNTIL_ERROR = r"""
import errno, os, sys
path, total = sys.argv[1], int(sys.argv[2])
written = 0
try:
    with open(path, "wb") as f:
        while written < total:
            f.write(b"x" * (1 << 20))
            f.flush()
            written += 1 << 20
except OSError as e:
    print(errno.errorcode[e.errno], written)
    sys.exit(1)
print("OK", written)
"""


@pytest.mark.parametrize("where", ["/workspace/big", "/tmp/big"])
async def test_disk_filling_stops_at_the_writable_layer_size(
    sandboxes: Sandboxes, where: str
) -> None:
    sb = await sandboxes.open(disk_mb=64, fsize_mb=256, memory_mb=256)
    dd = await sb.exec(["dd", "if=/dev/zero", f"of={where}", "bs=1M", "count=100"])
    assert dd.exit_code not in (0, None) and "No space left on device" in dd.stderr, describe(dd)
    size = await sb.exec(["stat", "-c", "%s", where])
    assert int(size.stdout) <= 64 * MB, describe(size)
    # the same through Python: ENOSPC as an error the program sees
    await sb.exec(["rm", "-f", where])
    await sb.write_file("fill.py", WRITE_UNTIL_ERROR.encode())
    py = await sb.exec(["python3", "fill.py", where, str(100 * MB)])
    assert py.exit_code == 1 and py.stdout.split()[0] == "ENOSPC", describe(py)
    # the space comes back when the file goes
    await sb.exec(["rm", "-f", where])
    ok = await sb.exec(["python3", "fill.py", where, str(16 * MB)])
    assert ok.ok and ok.stdout.split()[0] == "OK", describe(ok)
    assert host_can_fork() < 2.0
    await sandboxes.close_and_check(sb)


async def test_file_size_limit_stops_one_big_file(sandboxes: Sandboxes) -> None:
    sb = await sandboxes.open(disk_mb=64, fsize_mb=8)
    # dd takes SIGXFSZ's default action: killed by that signal, reported as such
    dd = await sb.exec(["dd", "if=/dev/zero", "of=big", "bs=1M", "count=16"])
    assert dd.signal == signal.SIGXFSZ and dd.exit_code is None, describe(dd)
    size = await sb.exec(["stat", "-c", "%s", "big"])
    assert int(size.stdout) == 8 * MB, describe(size)
    # Python ignores SIGXFSZ: the write fails with EFBIG instead
    await sb.write_file("fill.py", WRITE_UNTIL_ERROR.encode())
    py = await sb.exec(["python3", "fill.py", "/tmp/big", str(16 * MB)])
    assert py.exit_code == 1 and py.stdout.split() == ["EFBIG", str(8 * MB)], describe(py)
    # many files under the limit are fine (it is per file; the layer caps the total)
    many = await sb.exec("for i in 1 2 3; do head -c 7M /dev/zero > f$i || exit 1; done; echo ok")
    assert many.ok, describe(many)
    await sandboxes.close_and_check(sb)


INODE_BOMB = r"""
import os, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
n = 0
try:
    while n < 2_000_000:
        os.close(os.open(f"{d}/f{n}", os.O_CREAT | os.O_WRONLY, 0o644))
        n += 1
except OSError as e:
    print("ERR", e.errno, n)
    sys.exit(1)
print("OK", n)
"""


@pytest.mark.slow
@pytest.mark.parametrize("where", ["/workspace/many", "/tmp/many"])
async def test_inode_filling_fails_inside_the_sandbox(sandboxes: Sandboxes, where: str) -> None:
    marker = new_marker("inode")
    sb = await sandboxes.open(disk_mb=64, memory_mb=128, wall_s=30)
    await sb.write_file(f"{marker}.py", INODE_BOMB.encode())
    res = await sb.exec(["python3", f"{marker}.py", where], timeout_s=30)
    # stopped inside the sandbox: out of inodes (ENOSPC) or out of the sandbox's memory
    assert not res.ok and not res.timed_out, describe(res)
    assert res.oom_killed or res.stdout.startswith("ERR 28 "), describe(res)
    assert host_can_fork() < 2.0
    await sandboxes.close_and_check(sb, marker)
    # the layer went with the sandbox: the next one, even from the same start, has none of it
    await assert_next_sandbox_clean(sandboxes, marker, "f1999")


# ---- endless output -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cmd", "stream"),
    [
        ("yes", "stdout"),
        ("yes 'to stderr' >&2", "stderr"),
        (["python3", "-c", "while True: print('x' * 100)"], "stdout"),
    ],
)
async def test_endless_output_is_cut_at_the_cap(
    sandboxes: Sandboxes, cmd: str | list[str], stream: str
) -> None:
    sb = await sandboxes.open(wall_s=10)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    res = await sb.exec(cmd, timeout_s=1.5, output_cap=4096)
    assert res.timed_out and res.signal == signal.SIGKILL, describe(res)
    assert res.output_truncated, describe(res)
    assert len(getattr(res, stream)) == 4096, describe(res)
    other = "stderr" if stream == "stdout" else "stdout"
    assert len(getattr(res, other)) <= 4096
    assert res.wall_s < 1.5 + 3, describe(res)
    # the host kept the cap, not the gigabytes that went by
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0
    assert grown_kb < 64 * 1024, f"the host grew by {grown_kb} kB reading capped output"
    await sandboxes.close_and_check(sb)


async def test_huge_output_that_ends_is_read_while_it_is_produced(sandboxes: Sandboxes) -> None:
    """200 MB through a 4 kB cap: finishes (the pipe is drained), flagged, exit status kept."""
    sb = await sandboxes.open(wall_s=20)
    res = await sb.exec("head -c 200000000 /dev/zero | tr '\\0' y; exit 5", output_cap=4096)
    assert res.exit_code == 5 and not res.timed_out, describe(res)
    assert res.output_truncated and res.stdout == "y" * 4096, describe(res)
    # binary garbage is decoded with replacement, not a crash of the reader
    res = await sb.exec("head -c 1000000 /dev/urandom", output_cap=4096)
    assert res.exit_code == 0 and res.output_truncated, describe(res)
    assert 0 < len(res.stdout.encode("utf-8", "surrogatepass")) <= 3 * 4096
    # just under the cap is not truncated
    res = await sb.exec("head -c 4096 /dev/zero | tr '\\0' z", output_cap=4096)
    assert res.ok and not res.output_truncated and res.stdout == "z" * 4096, describe(res)
    await sandboxes.close_and_check(sb)


# ---- endless loop, sleeping past the limit ------------------------------------------------


@pytest.mark.slow
async def test_busy_loop_is_stopped_by_the_cpu_limit_from_outside(sandboxes: Sandboxes) -> None:
    sb = await sandboxes.open(wall_s=30, cpus=2)
    res = await sb.exec("while :; do :; done", cpu_s=1, timeout_s=10)
    assert res.timed_out and res.signal == signal.SIGKILL, describe(res)
    assert 0.9 <= res.cpu_s <= 2.5 and res.wall_s < 3, describe(res)
    # a loop that ignores every catchable signal (SIGXCPU of RLIMIT_CPU too) is stopped as well
    res = await sb.exec(
        "trap '' XCPU TERM INT HUP QUIT USR1 USR2; while :; do :; done", cpu_s=1, timeout_s=10
    )
    assert res.timed_out and res.signal == signal.SIGKILL and res.wall_s < 3, describe(res)
    # CPU time is the whole command's: two loops spend the budget twice as fast
    res = await sb.exec(
        "(while :; do :; done) & (while :; do :; done) & wait", cpu_s=1.5, timeout_s=10
    )
    assert res.timed_out and res.cpu_s <= 3.5 and res.wall_s < 3, describe(res)
    after = await sb.exec("echo alive")
    assert after.ok, describe(after)
    await sandboxes.close_and_check(sb)


@pytest.mark.parametrize(
    "cmd",
    [
        "sleep 100",
        "sleep 100 & wait",
        ["python3", "-c", "import time; time.sleep(100)"],
        "trap '' TERM INT HUP; sleep 100",
    ],
)
async def test_sleeping_past_the_wall_clock_limit(
    sandboxes: Sandboxes, cmd: str | list[str]
) -> None:
    sb = await sandboxes.open(wall_s=30)
    res = await sb.exec(cmd, timeout_s=1)
    assert res.timed_out and res.signal == signal.SIGKILL and res.exit_code is None, describe(res)
    assert 1 <= res.wall_s < 1 + 3, describe(res)
    assert res.cpu_s < 0.9, describe(res)  # a sleeper, stopped by the clock, not the CPU limit
    after = await sb.exec("echo alive")
    assert after.ok, describe(after)
    await sandboxes.close_and_check(sb)


async def test_default_wall_limit_applies_without_a_timeout(sandboxes: Sandboxes) -> None:
    sb = await sandboxes.open(wall_s=1.0)
    res = await sb.exec("sleep 100")
    assert res.timed_out and 1 <= res.wall_s < 4, describe(res)
    await sandboxes.close_and_check(sb)


async def test_grandchild_holding_the_output_open_does_not_hang_the_command(
    sandboxes: Sandboxes,
) -> None:
    sb = await sandboxes.open(wall_s=20)
    res = await sb.exec("(sleep 100 &); echo hi", timeout_s=10)
    assert res.exit_code == 0 and res.stdout == "hi\n" and not res.timed_out, describe(res)
    assert res.wall_s < 5, describe(res)
    await sandboxes.close_and_check(sb)


# ---- starving the neighbours --------------------------------------------------------------


@pytest.mark.slow
async def test_cpu_quota_holds_a_sandbox_to_its_cores(sandboxes: Sandboxes) -> None:
    sb = await sandboxes.open(cpus=1, wall_s=20)
    neighbour = await sandboxes.open(cpus=1)
    hog = asyncio.create_task(
        sb.exec("(while :; do :; done) & (while :; do :; done) & sleep 2.5; kill %1 %2")
    )
    await asyncio.sleep(0.7)
    # meanwhile the host runs a short command promptly, and so does another sandbox
    assert host_can_fork() < 0.5
    t0 = time.monotonic()
    other = await neighbour.exec("echo ok")
    assert other.ok and time.monotonic() - t0 < 1.0, describe(other)
    res = await hog
    assert res.exit_code == 0 and not res.timed_out, describe(res)
    assert res.wall_s >= 2.4, describe(res)
    assert res.cpu_s / res.wall_s <= 1.2, f"{res.cpu_s / res.wall_s:.2f} cores used; limit is 1"
    assert res.cpu_s >= 0.5 * res.wall_s, "the loops never ran: the test shows nothing"

    half = await sandboxes.open(cpus=0.5)
    res = await half.exec("timeout 2 bash -c 'while :; do :; done'; true")
    assert res.ok and res.cpu_s / res.wall_s <= 0.65, describe(res)
    await sandboxes.close_and_check(sb)
