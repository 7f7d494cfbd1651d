"""The bwrap backend: the seam's behaviour on a real bubblewrap container."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from rollbox.errors import SandboxError
from rollbox.sandbox import BwrapConfig, Limits, Mount, Sandbox, make_sandbox
from rollbox.sandbox import bwrap as bwrap_mod
from rollbox.sandbox.cgroups import CgroupHost


async def test_exec_argv_and_shell(sandbox: Sandbox) -> None:
    res = await sandbox.exec("cat hello.txt; echo oops >&2; exit 3")
    assert (res.exit_code, res.stdout, res.stderr) == (3, "hello from the workspace\n", "oops\n")
    assert res.signal is None and not res.ok
    res = await sandbox.exec(["python", "-c", "import pkg.mod; print(pkg.mod.VALUE + 1)"])
    assert res.stdout == "42\n" and res.ok
    assert res.cpu_s > 0 and res.peak_memory_kb and res.peak_memory_kb > 100


async def test_environment_cwd_and_stdin_are_explicit(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROLLBOX_HOST_SECRET", "hunter2")
    res = await sandbox.exec(["env"], env={"MINE": "a b"})
    lines = set(res.stdout.splitlines())
    assert "MINE=a b" in lines and "HOME=/tmp" in lines
    assert "hunter2" not in res.stdout and not any(x.startswith("RB_") for x in lines)
    await sandbox.exec("mkdir -p deep/er")
    assert (await sandbox.exec("pwd", cwd="deep/er")).stdout == "/workspace/deep/er\n"
    assert (await sandbox.exec(["cat"], stdin=b"piped in")).stdout == "piped in"
    with pytest.raises(ValueError):
        await sandbox.exec("true", cwd="../outside")
    with pytest.raises(ValueError):
        await sandbox.exec("true", env={"BAD-NAME": "x"})


async def test_identity_and_isolation(sandbox: Sandbox) -> None:
    res = await sandbox.exec("id -u; cat /proc/self/status | grep -E '^(CapEff|NoNewPrivs)'")
    uid, capeff, nnp = res.stdout.split("\n")[:3]
    assert uid == "1000" and capeff.split()[1] == "0000000000000000" and nnp.split()[1] == "1"
    res = await sandbox.exec("ls /proc | grep -E '^[0-9]+$' | wc -l")
    assert int(res.stdout) < 10, "only the sandbox's own processes are visible"
    res = await sandbox.exec("cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '")
    assert res.stdout.split() == ["lo"]
    res = await sandbox.exec("touch /usr/x 2>&1; touch /etc/x 2>&1; touch /x 2>&1; true")
    assert res.stdout.count("Read-only file system") + res.stdout.count("Permission denied") == 3
    assert (await sandbox.exec("unshare -U true")).exit_code != 0, "no nested user namespaces"


async def test_files_in_and_out_refuse_links(sandbox: Sandbox) -> None:
    await sandbox.write_file("new/dir/f.txt", b"data")
    assert (await sandbox.exec("cat new/dir/f.txt && echo more >> new/dir/f.txt")).ok
    assert await sandbox.read_file("new/dir/f.txt") == b"datamore\n"
    await sandbox.exec("ln -s /etc/hostname link.txt; ln -s /etc linkdir")
    with pytest.raises(SandboxError, match="link"):
        await sandbox.read_file("link.txt")
    with pytest.raises(SandboxError, match="link"):
        await sandbox.read_file("linkdir/hostname")
    with pytest.raises(ValueError):
        await sandbox.read_file("../../etc/passwd")
    names = {e.path: e.kind for e in await sandbox.list()}
    assert names["hello.txt"] == "file" and names["link.txt"] == "link" and names["pkg"] == "dir"


async def test_workspace_changes_stay_in_the_sandbox(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("original\n")
    async with await make_sandbox(BwrapConfig(), ws) as sb:
        assert (await sb.exec("echo changed > a.txt; rm -f a.txt; echo new > b.txt")).ok
    assert (ws / "a.txt").read_text() == "original\n" and not (ws / "b.txt").exists()
    async with await make_sandbox(BwrapConfig(), ws) as sb:
        assert (await sb.exec("cat a.txt; ls")).stdout == "original\na.txt\n"


async def test_snapshot_and_fork_are_independent(sandbox: Sandbox) -> None:
    await sandbox.exec("echo set-up > state.txt; rm hello.txt")
    snap = await sandbox.snapshot()
    try:
        a, b = await snap.fork(), await snap.fork()
        try:
            await a.exec("echo a >> state.txt")
            await b.exec("echo b >> state.txt; touch only-b")
            assert (await a.exec("cat state.txt; ls")).stdout == "set-up\na\npkg\nstate.txt\n"
            assert (await b.exec("cat state.txt")).stdout == "set-up\nb\n"
            await sandbox.exec("echo parent >> state.txt")
            assert (await a.exec("cat state.txt")).stdout == "set-up\na\n"
            c = await a.fork()  # a fork of a fork
            async with c:
                assert (await c.exec("cat state.txt; ls hello.txt 2>&1")).stdout.startswith(
                    "set-up\na\nls: cannot access"
                )
        finally:
            await a.close()
            await b.close()
    finally:
        snap.release()
    assert (await sandbox.exec("cat state.txt")).stdout == "set-up\nparent\n"


async def test_mounts_are_read_only_unless_writable(tmp_path: Path) -> None:
    ro, rw = tmp_path / "ro", tmp_path / "rw"
    ro.mkdir(mode=0o755)
    rw.mkdir(mode=0o755)
    (ro / "f").write_text("x")
    mounts = {"/data/ro": Mount(ro), "/data/rw": Mount(rw, writable=True)}
    async with await make_sandbox(BwrapConfig(), None, mounts=mounts) as sb:
        assert (await sb.exec("cat /data/ro/f")).stdout == "x"
        assert not (await sb.exec("touch /data/ro/g")).ok
        assert (await sb.exec("echo report > /data/rw/out")).ok
    assert (rw / "out").read_text() == "report\n"


async def test_close_is_idempotent_and_leaves_nothing(tmp_path: Path) -> None:
    sb = await make_sandbox(BwrapConfig(), None)
    await sb.exec("sleep 600 & (setsid sleep 600 &) ; nohup sleep 600 >/dev/null 2>&1 &")
    assert isinstance(sb, bwrap_mod.BwrapSandbox) and sb._group is not None
    group, state_dir = sb._group, sb._dir
    assert len(group.procs()) >= 4
    await sb.close()
    await sb.close()
    assert group.procs() == [] and state_dir is not None and not state_dir.exists()
    assert not any(p.exists() for p in group.dirs.values())  # type: ignore[attr-defined]
    with pytest.raises(SandboxError):
        await sb.exec("true")


async def test_close_finishes_when_cancelled() -> None:
    sb = await make_sandbox(BwrapConfig(), None)
    assert isinstance(sb, bwrap_mod.BwrapSandbox)
    state_dir = sb._dir
    task = asyncio.ensure_future(sb.close())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(200):
        if state_dir is not None and not state_dir.exists():
            break
        await asyncio.sleep(0.01)
    assert state_dir is not None and not state_dir.exists()


async def test_refuses_limits_it_cannot_enforce(monkeypatch: pytest.MonkeyPatch) -> None:
    real = bwrap_mod.detect_host(BwrapConfig())
    crippled = bwrap_mod.Host(
        real.bwrap, real.uid, CgroupHost(0, {}, None, "no cgroups here"), False, "no overlay",
        real.python_dirs,
    )  # fmt: skip
    monkeypatch.setattr(bwrap_mod, "_host", crippled)
    with pytest.raises(SandboxError) as info:
        await make_sandbox(BwrapConfig(), None)
    msg = str(info.value)
    assert "memory" in msg and "pids" in msg and "disk_mb" in msg and "allow_unenforced" in msg
    async with await make_sandbox(BwrapConfig(allow_unenforced=True), None) as sb:
        res = await sb.exec("echo works; sleep 3", timeout_s=0.5)
        assert res.timed_out and res.stdout == "works\n"
        assert res.peak_memory_kb is None, "no cgroup: peak memory is unknown, not made up"


async def test_a_sandbox_whose_container_died_says_so(sandbox: Sandbox) -> None:
    assert isinstance(sandbox, bwrap_mod.BwrapSandbox) and sandbox._agent_pid is not None
    os.kill(sandbox._agent_pid, 9)
    for _ in range(100):
        if not sandbox.alive:
            break
        await asyncio.sleep(0.01)
    with pytest.raises(SandboxError, match="died"):
        await sandbox.exec("true")


async def test_limits_hold(tmp_path: Path) -> None:
    lim = Limits(memory_mb=96, pids=32, disk_mb=16, fsize_mb=4, wall_s=10, cpu_s=1)
    async with await make_sandbox(BwrapConfig(), None, limits=lim) as sb:
        res = await sb.exec(["python", "-c", "x = bytearray(400 * 2**20); print('no')"])
        assert res.oom_killed and res.signal == 9 and "no" not in res.stdout
        res = await sb.exec("for i in $(seq 64); do sleep 5 & done; wait", timeout_s=3)
        assert "fork" in res.stderr or "Resource temporarily unavailable" in res.stderr
        res = await sb.exec("head -c 8M /dev/zero > big; ls -l big")
        assert res.exit_code != 0 or "File size limit" in res.stderr
        res = await sb.exec("for i in 1 2 3 4 5; do head -c 3M /dev/zero > f$i || exit 1; done")
        assert res.exit_code == 1 and "No space left" in res.stderr
        res = await sb.exec("while :; do :; done")
        assert res.timed_out and res.cpu_s < 3 and res.wall_s < 5
        assert (await sb.exec("echo still alive")).stdout == "still alive\n"


async def test_processes_of_a_sandbox_cannot_trace_each_other(sandbox: Sandbox) -> None:
    script = (
        "import ctypes, os, sys\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.ptrace(16, int(sys.argv[1]), 0, 0), ctypes.get_errno())\n"
    )
    res = await sandbox.exec(f"sleep 5 & python3 -c '{script}' $!; kill %1")
    assert res.stdout.split() == ["-1", "1"], res  # EPERM
    assert "Seccomp:\t2" in (await sandbox.exec("cat /proc/self/status")).stdout
