"""A rollbox process killed with SIGKILL leaves nothing behind once rollbox starts again."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rollbox.sandbox import cgroups, layers, state

OWNER = textwrap.dedent(
    """
    import asyncio, json, sys
    from rollbox.sandbox import BwrapConfig, make_sandbox
    from rollbox.sandbox.state import _start_time as start_time

    async def main():
        sbs = await asyncio.gather(*(make_sandbox(BwrapConfig()) for _ in range(50)))
        for sb in sbs:
            res = await sb.exec(
                "(setsid sleep 1000.4242 &) ; nohup sleep 1001.4242 >/dev/null 2>&1 &"
            )
            assert res.ok, res
        print(json.dumps({
            "dirs": [str(sb._dir) for sb in sbs],
            "groups": [sb._group.name for sb in sbs],
            "agents": [[sb._agent_pid, start_time(sb._agent_pid)] for sb in sbs],
            "bwraps": [sb._proc.pid for sb in sbs],
        }), flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


def _processes_of(owner_dir: Path) -> list[int]:
    """Live processes of one rollbox process's sandboxes: its bubblewrap monitors (their
    command line names its state directory), anything in its cgroups, and the marked sleeps."""
    tag = owner_dir.name
    pids = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            cmd = (p / "cmdline").read_bytes()
            groups = (p / "cgroup").read_text()
            zombie = "State:\tZ" in (p / "status").read_text()
        except OSError:
            continue
        if zombie:
            continue
        if str(owner_dir).encode() in cmd or f"/rollbox/{tag}." in groups or b".4242" in cmd:
            pids.append(int(p.name))
    return pids


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="the crash sweep of cgroups and mounts needs root")
def test_sigkill_of_the_owner_of_50_sandboxes_leaves_nothing() -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert owner.stdout is not None
    line = owner.stdout.readline()
    assert line, owner.stderr.read() if owner.stderr else "no output"
    info = json.loads(line)
    dirs = [Path(d) for d in info["dirs"]]
    owner_dir = dirs[0].parent
    assert len(set(info["groups"])) == 50 and all(d.exists() for d in dirs)
    assert len(_processes_of(owner_dir)) >= 200  # 50 × (bwrap, agent, two sleeps) at least
    # a tmpfs and an overlay per sandbox: in the host's mount table, or (with the compiled
    # launcher) in the mount namespace each sandbox's bubblewrap runs in
    workspace_mounts = len(layers.mounts_beneath(owner_dir)) + sum(
        Path(f"/proc/{pid}/mountinfo").read_text().count(f" {d}/") for pid, d in
        zip(info["bwraps"], info["dirs"], strict=True)
    )  # fmt: skip
    assert workspace_mounts >= 100

    owner.send_signal(signal.SIGKILL)
    owner.wait(timeout=30)

    # "start rollbox again": a new process that starts a sandbox sweeps first
    again = subprocess.run(
        [sys.executable, "-c", "import asyncio\nfrom rollbox.sandbox import BwrapConfig, "
         "make_sandbox\nasync def m():\n    sb = await make_sandbox(BwrapConfig())\n"
         "    assert (await sb.exec('true')).ok\n    await sb.close()\nasyncio.run(m())"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr

    deadline = time.monotonic() + 10
    while _processes_of(owner_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_of(owner_dir) == [], "processes of the killed owner's sandboxes survive"
    assert not owner_dir.exists()
    assert layers.mounts_beneath(owner_dir) == []
    for pid in info["bwraps"]:  # gone, or a zombie whose reaping is init's job
        with contextlib.suppress(FileNotFoundError):
            assert "State:\tZ" in Path(f"/proc/{pid}/status").read_text(), f"bwrap {pid} lives"
    left = set(cgroups.detect().existing()) & set(info["groups"])
    assert left == set(), f"cgroups left: {sorted(left)[:5]}"
    for pid, started in info["agents"]:
        if state._start_time(pid) == started:  # the same process: it may only be a zombie
            status = Path(f"/proc/{pid}/status").read_text()  # whose reaping is init's job
            assert "State:\tZ" in status, f"agent {pid} survives:\n{status[:300]}"
    assert state.default_root().exists()
