"""Hostile code against the bwrap sandbox: processes that outlive the sandbox (THREATS.md A).

`setsid`, double forks, `nohup`, `disown`, plain background jobs, processes that ignore every
catchable signal and processes that keep forking: all of them are seen running on the host
first (so that the test can fail), and none of them may remain after close(). "Remain" is
checked on the host's /proc: by the sandbox's PID namespace, its cgroup, each process's unique
marker, and any new process of the sandbox user (uid 65534) that nobody else owns.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time

import pytest

from tests.sandbox.test_hostile_support import (
    SANDBOX_HOST_UID,
    Sandboxes,
    assert_gone,
    assert_next_sandbox_clean,
    describe,
    host_processes,
    needs_bwrap,
    new_marker,
    sandboxes,
)

__all__ = ["sandboxes"]  # the fixture, imported for pytest
pytestmark = [needs_bwrap, pytest.mark.timeout(120)]


def _escapes(m: str) -> dict[str, str]:
    """Ways to leave a process running, each tagged with its own marker in its command line."""
    sleeper = "sleep 1000"
    return {
        f"{m}setsid": f"setsid bash -c 'exec -a {m}setsid {sleeper}' &",
        f"{m}nohup": f"nohup bash -c 'exec -a {m}nohup {sleeper}' >/dev/null 2>&1 &",
        f"{m}double": f"(bash -c 'exec -a {m}double {sleeper}' &)",
        f"{m}disown": f"bash -c 'exec -a {m}disown {sleeper}' & disown",
        f"{m}bg": f"bash -c 'exec -a {m}bg {sleeper}' &",
        f"{m}deaf": (
            f"setsid bash -c \"trap '' HUP INT TERM QUIT USR1 USR2 PIPE; "
            f'exec -a {m}deaf {sleeper}" </dev/null >/dev/null 2>&1 &'
        ),
        f"{m}respawn": (
            f"setsid bash -c 'trap \"\" HUP TERM; while :; do sleep 0.2 & wait; done' "
            f"{m}respawn </dev/null >/dev/null 2>&1 &"
        ),
        f"{m}pydaemon": (
            'python3 -c "import os, signal, time, sys\n'
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            "        [signal.signal(s, signal.SIG_IGN) for s in (1, 2, 3, 15)]\n"
            "        os.closerange(0, 256)\n"
            f"        os.execvp('sleep', ['{m}pydaemon', '1000'])\n"
            "    os._exit(0)\n"
            'os.wait()" '
        ),
    }


def _running(markers: list[str]) -> dict[str, list[int]]:
    procs = host_processes()
    return {m: [p.pid for p in procs if m in p.cmdline] for m in markers}


async def _wait_running(markers: list[str], timeout_s: float = 5.0) -> dict[str, list[int]]:
    deadline = time.monotonic() + timeout_s
    while True:
        found = _running(markers)
        if all(found.values()) or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.05)


async def test_detached_processes_do_not_outlive_close(sandboxes: Sandboxes) -> None:
    m = new_marker("left")
    escapes = _escapes(m)
    sb = await sandboxes.open(pids=256)
    res = await sb.exec("\n".join(escapes.values()) + "\necho started", timeout_s=10)
    assert res.ok and res.stdout.endswith("started\n") and res.wall_s < 5, describe(res)

    found = await _wait_running(list(escapes))
    missing = [k for k, pids in found.items() if not pids]
    assert not missing, f"the test's escapes did not start: {missing}"
    for pids in found.values():
        for p in host_processes():
            if p.pid in pids:
                assert p.uid == SANDBOX_HOST_UID
    # they survive the command and keep running in the sandbox until it closes
    res = await sb.exec(f"pgrep -fc {m}")
    assert int(res.stdout or 0) >= len(escapes), describe(res)

    t0 = time.monotonic()
    await sandboxes.close_and_check(sb, m)
    assert time.monotonic() - t0 < 10, "close() took too long"
    assert not any(_running(list(escapes)).values())
    await assert_next_sandbox_clean(sandboxes, m)


async def test_processes_left_by_a_timed_out_command_do_not_outlive_close(
    sandboxes: Sandboxes,
) -> None:
    m = new_marker("tmo")
    escapes = _escapes(m)
    sb = await sandboxes.open(pids=256)
    # detach everything, then hang: the wall limit kills the command's own process group only
    res = await sb.exec("\n".join(escapes.values()) + "\nsleep 100", timeout_s=1.5)
    assert res.timed_out, describe(res)
    # those in a session of their own escaped the kill of the command's process group
    detached = [f"{m}{k}" for k in ("setsid", "deaf", "respawn", "pydaemon")]
    found = await _wait_running(detached)
    assert all(found.values()), f"not all detached processes run: {found}"
    after = await sb.exec("echo alive")
    assert after.ok, describe(after)
    await sandboxes.close_and_check(sb, m)
    await assert_next_sandbox_clean(sandboxes, m)


async def test_a_process_forking_as_fast_as_it_can_does_not_outlive_close(
    sandboxes: Sandboxes,
) -> None:
    """A fork loop (each child forks on, the parent exits) races the kill at close()."""
    m = new_marker("hop")
    sb = await sandboxes.open(pids=128)
    res = await sb.exec(
        f"setsid bash -c 'hop() {{ echo >> /tmp/hops; (hop &); exit; }}; hop' {m} "
        "</dev/null >/dev/null 2>&1 & sleep 0.5; echo started",
        timeout_s=10,
    )
    assert res.ok, describe(res)
    # each hop lives an instant, so a scan of /proc may miss them all: count the hops instead
    counts = []
    for _ in range(2):
        counts.append(int((await sb.exec("wc -l < /tmp/hops")).stdout.strip() or 0))
        await asyncio.sleep(0.3)
    assert 0 < counts[0] < counts[1], f"the fork loop is not running: {counts}"
    await sandboxes.close_and_check(sb, m)


async def test_many_sandboxes_closed_together_leave_nothing(sandboxes: Sandboxes) -> None:
    m = new_marker("many")
    boxes = await asyncio.gather(*(sandboxes.open() for _ in range(4)))
    results = await asyncio.gather(
        *(b.exec(f"setsid bash -c 'exec -a {m}{i} sleep 1000' & echo ok")
          for i, b in enumerate(boxes))
    )  # fmt: skip
    assert all(r.ok for r in results), [describe(r) for r in results]
    found = await _wait_running([f"{m}{i}" for i in range(4)])
    assert all(found.values()), found
    for t in sandboxes.opened:
        t.markers.append(m)
        t.refresh()
    await asyncio.gather(*(b.close() for b in boxes))
    # the fixture's teardown checks each of them; check the markers here as well
    deadline = time.monotonic() + 5
    while any(_running([m]).values()) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not any(_running([m]).values()), "processes of closed sandboxes remain"


async def test_the_leftover_check_itself_sees_leftovers(sandboxes: Sandboxes) -> None:
    """The checks above are not vacuous: they see a live sandbox, and a planted leftover."""
    live = await sandboxes.open()
    await live.exec("sleep 30 &")
    seen = sandboxes.tracked(live).leftovers([p for p in host_processes() if not p.zombie])
    assert len(seen) >= 2, "the check does not see a live sandbox's processes"  # agent + sleep

    m = new_marker("self")
    sb = await sandboxes.open()
    tracked = sandboxes.tracked(sb)
    tracked.markers.append(m)
    await sb.close()
    # a process of the sandbox user left on the host, as an escaped one would be
    leak = subprocess.Popen(
        ["bash", "-c", f"sleep 60; : {m}"],
        user=SANDBOX_HOST_UID,
        group=SANDBOX_HOST_UID,
        extra_groups=[],
        cwd="/",
        start_new_session=True,
    )
    try:
        await _wait_running([m])
        with pytest.raises(AssertionError, match=m):
            await assert_gone(tracked, sandboxes.before, sandboxes.still_open(), settle_s=0.2)
        # without the marker too: a new process of the sandbox user that nobody else owns
        tracked.markers.clear()
        with pytest.raises(AssertionError, match=f"sleep 60; : {m}|pid={leak.pid}"):
            await assert_gone(tracked, sandboxes.before, sandboxes.still_open(), settle_s=0.2)
    finally:
        os.killpg(leak.pid, signal.SIGKILL)
        leak.wait()
    await assert_gone(tracked, sandboxes.before, sandboxes.still_open())
