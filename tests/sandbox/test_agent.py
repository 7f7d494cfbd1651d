"""The sandbox's PID 1: the compiled agent (built and cached), the bash fallback, the protocol."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import subprocess
from pathlib import Path

import pytest

from rollbox.errors import SandboxError
from rollbox.sandbox import BwrapConfig, Sandbox, agentbuild, cgroups, make_sandbox, state
from rollbox.sandbox import bwrap as bwrap_mod
from rollbox.sandbox.doctor import host_checks
from tests.sandbox.test_hostile_support import host_processes, processes_naming

needs_cc = pytest.mark.skipif(agentbuild.compiler() is None, reason="no C compiler here")


@needs_cc
def test_built_once_then_taken_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = agentbuild.build("agent", tmp_path)
    assert built.path is not None and built.path.parent == tmp_path, built.why_not
    assert os.access(built.path, os.X_OK)

    def no_compiling(*args: object, **kwargs: object) -> object:
        raise AssertionError("compiled again although the cache holds this version")

    monkeypatch.setattr(agentbuild.subprocess, "run", no_compiling)
    assert agentbuild.build("agent", tmp_path) == built
    assert [p.name for p in tmp_path.iterdir()] == [built.path.name]  # no temporary left


@needs_cc
def test_another_source_is_another_binary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = agentbuild.build("agent", tmp_path).path
    edited = tmp_path / "src" / "agent.c"
    edited.parent.mkdir()
    edited.write_text(agentbuild.SOURCES["agent"].read_text() + "\n/* edited */\n")
    monkeypatch.setitem(agentbuild.SOURCES, "agent", edited)
    second = agentbuild.build("agent", tmp_path / "cache").path
    assert first is not None and second is not None and first.name != second.name


def test_no_compiler_is_said_plainly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "no-such-compiler-here")
    built = agentbuild.build("agent", tmp_path)
    assert built.path is None and "$CC=no-such-compiler-here is not found" in built.why_not
    monkeypatch.delenv("CC")
    monkeypatch.setenv("PATH", str(tmp_path))
    built = agentbuild.build("launch", tmp_path)
    assert built.path is None and "no C compiler" in built.why_not and "gcc" in built.why_not


@needs_cc
def test_a_source_that_does_not_compile_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "agent.c"
    bad.write_text("int main(void) { return undeclared_thing; }\n")
    monkeypatch.setitem(agentbuild.SOURCES, "agent", bad)
    built = agentbuild.build("agent", tmp_path / "cache")
    assert built.path is None and "could not build agent.c" in built.why_not
    assert "undeclared_thing" in built.why_not
    assert list((tmp_path / "cache").iterdir()) == []  # no half-written binary


def _without_compiled_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    host = bwrap_mod.detect_host()
    missing = agentbuild.Built(None, "no C compiler (test)")
    monkeypatch.setattr(bwrap_mod, "_host", dataclasses.replace(host, agent=missing))


async def _pid1_name(sb: Sandbox) -> str:
    res = await sb.exec("sed -n 's/^Name:\\s*//p' /proc/1/status")
    assert res.ok, res
    return res.stdout.strip()


async def test_auto_falls_back_to_bash_without_a_compiled_agent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without_compiled_agent(monkeypatch)
    async with await make_sandbox(BwrapConfig(), None) as sb:
        assert await _pid1_name(sb) == "rollbox-bash"
    with pytest.raises(SandboxError, match=r"compiled sandbox agent was asked for: no C compiler"):
        await make_sandbox(BwrapConfig(agent="compiled"), None)


@needs_cc
@pytest.mark.parametrize(("agent", "pid1"), [("auto", "rollbox-agent"), ("bash", "rollbox-bash")])
async def test_the_agent_asked_for_is_pid_1(agent: str, pid1: str) -> None:
    async with await make_sandbox(BwrapConfig(agent=agent), None) as sb:  # type: ignore[arg-type]
        assert await _pid1_name(sb) == pid1


async def test_commands_that_cannot_start_say_why(sandbox: Sandbox) -> None:
    res = await sandbox.exec(["no-such-command-x"])
    assert res.exit_code == 127 and "no-such-command-x" in res.stderr and "not found" in res.stderr
    res = await sandbox.exec(["true"], cwd="no/such/dir")
    assert res.exit_code == 126 and "no such directory: /workspace/no/such/dir" in res.stderr
    res = await sandbox.exec(["/etc/passwd"])  # not executable
    assert res.exit_code == 126, res


async def test_limits_environment_and_descriptors_of_a_command(sandbox: Sandbox) -> None:
    res = await sandbox.exec(
        "ulimit -t; ulimit -f; ulimit -n; env | sort | tr '\\n' ' '; echo; "
        "ls /proc/self/fd | tr '\\n' ' '",
        env={"ONLY_THIS": "1"},
        cpu_s=7,
    )
    lines = res.stdout.splitlines()
    assert lines[0] == "8"  # whole seconds, one above the limit enforced from outside
    lim = sandbox.limits
    assert int(lines[1]) == lim.fsize_mb * 1024 and lines[2] == str(lim.nofile)
    names = {kv.split("=", 1)[0] for kv in lines[3].split()}
    assert "ONLY_THIS" in names and not any(n.startswith("RB_") for n in names), lines[3]
    # stdin, stdout, stderr and the descriptor ls itself opens: none of the agent's pipes
    assert sorted(int(fd) for fd in lines[4].split()) == [0, 1, 2, 3], lines[4]


async def test_pid_1_reaps_orphans(sandbox: Sandbox) -> None:
    res = await sandbox.exec("for i in $(seq 20); do (true &) ; done; sleep 0.3")
    assert res.ok
    res = await sandbox.exec("ps -eo stat= | grep -c '^Z' || true")
    assert res.stdout.strip() == "0", "orphans that exited are left as zombies"


async def test_many_commands_at_once_each_get_their_own_result(sandbox: Sandbox) -> None:

    results = await asyncio.gather(*(sandbox.exec(f"echo {i}; exit {i % 7}") for i in range(40)))
    for i, res in enumerate(results):
        assert res.stdout == f"{i}\n" and res.exit_code == i % 7, (i, res)


@needs_cc
def test_doctor_names_the_agent_and_the_launcher() -> None:
    checks = {c.name: c for c in host_checks()}
    assert checks["agent"].ok and "compiled" in checks["agent"].detail
    assert checks["launcher"].ok and "compiled" in checks["launcher"].detail


def test_doctor_says_when_the_bash_agent_stands_in(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = agentbuild.Built(None, "no C compiler (test)")
    monkeypatch.setattr(agentbuild, "_built", {"agent": missing, "launch": missing})
    checks = {c.name: c for c in host_checks()}
    assert not checks["agent"].ok and "bash" in checks["agent"].detail
    assert "no C compiler (test)" in checks["agent"].detail
    assert not checks["launcher"].ok and "chroot" in checks["launcher"].detail


# ---- the launcher ---------------------------------------------------------------------------


def _launch(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    built = agentbuild.build("launch")
    assert built.path is not None, built.why_not
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [str(built.path), *args], capture_output=True, text=True, timeout=10, **kwargs
    )


@needs_cc
def test_the_launcher_switches_user_and_runs_the_command() -> None:
    if os.geteuid() != 0:
        pytest.skip("switching users needs root")
    res = _launch("--user", "65534:65534", "--", "sh", "-c", "id -u; id -g; id -G")
    assert res.returncode == 0 and res.stdout.split() == ["65534"] * 3, res


@needs_cc
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cgroup", "/nonexistent/rollbox/tasks", "--", "true"], "cannot open"),
        (["--user", "abc", "--", "true"], "bad --user"),
        (["--frobnicate", "--", "true"], "unknown argument"),
        (["--user", "1:1"], "no command"),
        (["--", "/nonexistent/program"], "cannot run"),
    ],
)
def test_the_launcher_refuses_with_125_and_a_reason(args: list[str], message: str) -> None:
    res = _launch(*args)
    assert res.returncode == 125 and message in res.stderr, res


@needs_cc
def test_the_launcher_waits_at_the_gate_and_gives_up_on_eof(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    r, w = os.pipe()
    os.close(w)  # the host gave up: EOF, not the byte
    try:
        res = _launch("--wait-fd", str(r), "--", "touch", str(marker), pass_fds=(r,))
    finally:
        os.close(r)
    assert res.returncode == 125 and res.stderr == "" and not marker.exists(), res
    r, w = os.pipe()
    os.write(w, b"1")
    try:
        res = _launch("--wait-fd", str(r), "--", "touch", str(marker), pass_fds=(r,))
    finally:
        os.close(r)
        os.close(w)
    assert res.returncode == 0 and marker.exists(), res


@pytest.mark.parametrize("agent", ["compiled", "bash"])
async def test_everything_in_a_sandbox_is_in_its_cgroups(agent: str) -> None:
    if agent == "compiled" and agentbuild.compiler() is None:
        pytest.skip("no C compiler here: only the bash agent")
    async with await make_sandbox(BwrapConfig(agent=agent), None) as sb:  # type: ignore[arg-type]
        assert isinstance(sb, bwrap_mod.BwrapSandbox)
        group, pid = sb._group, sb._agent_pid
        if group is None:
            pytest.skip("no cgroups on this host")
        assert pid is not None
        res = await sb.exec("sleep 5 >/dev/null 2>&1 & echo started")
        assert res.ok
        pidns = os.readlink(f"/proc/{pid}/ns/pid")

        def agent_and_sleep() -> list[int]:  # (a request's reporter may be on its way out)
            return [
                p.pid
                for p in host_processes()
                if p.pidns == pidns and not p.zombie
                and (p.pid == pid or p.cmdline.startswith("sleep"))
            ]  # fmt: skip

        inside = agent_and_sleep()
        for _ in range(100):  # the background child may not have become `sleep` yet
            if len(inside) == 2:
                break
            await asyncio.sleep(0.02)
            inside = agent_and_sleep()
        assert pid in inside and len(inside) == 2, inside
        # in the group on every controller: no hierarchy where a command escapes its limits
        host = bwrap_mod.detect_host()
        per_controller = (
            [group.dir] if isinstance(group, cgroups.CgroupV2) else list(group.dirs.values())
        )
        assert len(per_controller) == len(host.cgroups.entry_files(group.name))
        for d in per_controller:
            members = {int(x) for x in (d / "cgroup.procs").read_text().split()}
            assert set(inside) <= members, (d, inside, members)


def _host_with_cgroups() -> bwrap_mod.Host:
    host = bwrap_mod.detect_host()
    if not host.cgroups.version:
        pytest.skip("no cgroups on this host")
    return host


@needs_cc
async def test_a_launcher_that_cannot_enter_the_cgroup_fails_the_start_plainly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host = _host_with_cgroups()
    monkeypatch.setattr(
        type(host.cgroups), "entry_files", lambda self, name: [Path("/nonexistent/x/tasks")]
    )
    with pytest.raises(SandboxError, match="rollbox-launch: cannot open /nonexistent/x/tasks"):
        await make_sandbox(BwrapConfig(), None)


async def test_a_cgroup_that_cannot_be_made_fails_the_start_and_leaves_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host = _host_with_cgroups()
    before = set(host.cgroups.existing())

    def refuse(self: object, name: str, limits: object) -> object:
        raise SandboxError(f"could not set up cgroup {name}: refused for the test")

    monkeypatch.setattr(type(host.cgroups), "create", refuse)
    own = state.owner()
    # (sandboxes that other tests of this process keep open, warm judges say, are not ours)
    before_procs = processes_naming(own.dir).keys()
    for agent in ("auto", "bash"):  # (auto: compiled where a C compiler is found)
        for _ in range(5):  # (a leak that depends on timing gets five chances to show)
            with pytest.raises(SandboxError, match="refused for the test"):
                await make_sandbox(BwrapConfig(agent=agent), None)  # type: ignore[arg-type]
    assert set(host.cgroups.existing()) == before
    # and no process: a bubblewrap (or its child) started for one of them would name the
    # state directory in its command line
    for _ in range(50):
        now = processes_naming(own.dir)
        left = {pid: cmd for pid, cmd in now.items() if pid not in before_procs}
        if not left:
            break
        await asyncio.sleep(0.05)
    assert not left, left


@needs_cc
async def test_the_compiled_agent_cannot_be_stopped_or_killed_from_inside() -> None:
    async with await make_sandbox(BwrapConfig(agent="compiled"), None) as sb:
        res = await sb.exec("kill -STOP 1; kill -9 1; kill -9 -1; echo still; exit 4", timeout_s=5)
        assert res.exit_code == 4 and res.stdout == "still\n" and res.wall_s < 2, res
        res = await sb.exec("echo alive")
        assert res.ok and res.stdout == "alive\n" and res.wall_s < 1, res


async def test_a_killed_command_takes_its_process_group_and_the_agent_goes_on(
    sandbox: Sandbox,
) -> None:
    res = await sandbox.exec("sleep 30 & sleep 30 & echo started; wait", timeout_s=0.5)
    assert res.timed_out and res.stdout == "started\n", res
    # SIGKILL is sent at once; dying (and being reaped by PID 1) takes a moment
    left = await sandbox.exec(
        "for i in $(seq 50); do n=$(ps -eo comm= | grep -c '^sleep$'); "
        '[ "$n" = 0 ] && break; sleep 0.02; done; echo $n'
    )
    assert left.stdout.strip() == "0", "the killed command's children live on"
    again = await sandbox.exec(["true"])
    assert again.ok


@needs_cc
def test_a_cache_others_can_write_is_not_used(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    built = agentbuild.build("launch", cache)
    assert built.path is not None, built.why_not
    os.chmod(cache, 0o777)
    refused = agentbuild.build("launch", cache)
    assert refused.path is None and "writable by others (mode 777)" in refused.why_not
    os.chmod(cache, 0o755)
    os.chmod(built.path, 0o777)  # a planted or loosened binary is built again, not run
    rebuilt = agentbuild.build("launch", cache)
    assert rebuilt.path == built.path and rebuilt.path.stat().st_mode & 0o777 == 0o755


async def test_output_after_killing_the_bash_reporter_is_kept_and_limits_still_hold() -> None:
    """Under the bash agent a command can kill its per-command reporter (`kill -9 -1`); what it
    prints afterwards is still its output, and it is still held to its wall limit."""
    async with await make_sandbox(BwrapConfig(agent="bash"), None) as sb:
        res = await sb.exec("kill -9 -1; sleep 0.3; echo late; exit 3", timeout_s=5)
        assert res.stdout == "late\n" and not res.timed_out and res.signal == 9, res
        res = await sb.exec("kill -9 -1; exec sleep 100", timeout_s=1)
        assert res.timed_out and res.wall_s < 3, res
        left = await sb.exec(
            "for i in $(seq 50); do n=$(ps -eo comm= | grep -c '^sleep$'); "
            '[ "$n" = 0 ] && break; sleep 0.02; done; echo $n'
        )
        assert left.stdout.strip() == "0", "the command outlived its time-out"
