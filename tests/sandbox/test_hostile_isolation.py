"""Hostile code against the bwrap sandbox, isolation classes of THREATS.md part A.

network egress, reading the host (files, other sandboxes, hidden tests, the environment),
writing outside the workspace and planting files for later runs, signals to and ptrace of
other processes. See test_hostile.py for the resource classes and the shared conventions.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rollbox.errors import SandboxError
from tests.sandbox.test_hostile_support import (
    Canaries,
    Sandboxes,
    assert_next_sandbox_clean,
    canaries,
    describe,
    host_pid_alive,
    host_processes,
    needs_bwrap,
    new_marker,
    sandboxes,
)

__all__ = ["canaries", "sandboxes"]  # the fixtures, imported for pytest
pytestmark = [needs_bwrap, pytest.mark.timeout(120)]

HERE = Path(__file__).resolve()


# ---- network egress -----------------------------------------------------------------------


class _Listener:
    """A TCP (or abstract unix) server on the host that counts who connects."""

    def __init__(self, family: int, address: object) -> None:
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.bind(address)
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.accepted = 0
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.accepted += 1
            with contextlib.suppress(OSError):
                conn.sendall(b"host secret\n")
            conn.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join(2)
        self.sock.close()


@pytest.fixture
def host_tcp() -> Iterator[tuple[_Listener, int]]:
    srv = _Listener(socket.AF_INET, ("0.0.0.0", 0))
    try:
        yield srv, srv.sock.getsockname()[1]
    finally:
        srv.close()


def _host_addresses() -> list[str]:
    """The host's own IPv4 addresses other than loopback (may be empty)."""
    out = set()
    with contextlib.suppress(OSError):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect(("10.255.255.255", 1))  # no packet is sent; picks the outgoing address
        out.add(s.getsockname()[0])
        s.close()
    return sorted(a for a in out if not a.startswith("127."))


CONNECT = r"""
import socket, sys
host, port = sys.argv[1], int(sys.argv[2])
try:
    s = socket.create_connection((host, port), timeout=2)
    print("CONNECTED", s.recv(100))
except OSError as e:
    print("REFUSED", type(e).__name__, e.errno)
"""


async def test_the_hosts_loopback_is_not_reachable(
    sandboxes: Sandboxes, host_tcp: tuple[_Listener, int]
) -> None:
    srv, port = host_tcp
    # the host itself can reach its server: the test can see a connection when there is one
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        assert s.recv(100) == b"host secret\n"
    deadline = time.monotonic() + 2
    while srv.accepted < 1 and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert srv.accepted == 1
    sb = await sandboxes.open()
    targets = ["127.0.0.1", *_host_addresses()]
    for host in targets:
        res = await sb.exec(["python3", "-c", CONNECT, host, str(port)], timeout_s=10)
        assert res.exit_code == 0 and res.stdout.startswith("REFUSED"), describe(res)
        assert "host secret" not in res.stdout
    res = await sb.exec(f"exec 3<>/dev/tcp/127.0.0.1/{port} && cat <&3", timeout_s=5)
    assert res.exit_code != 0 and "host secret" not in res.stdout, describe(res)
    await asyncio.sleep(0.2)
    assert srv.accepted == 1, "a sandbox connected to a server on the host"
    await sandboxes.close_and_check(sb)


async def test_the_outside_world_is_not_reachable(sandboxes: Sandboxes) -> None:
    sb = await sandboxes.open()
    for host in ("1.1.1.1", "8.8.8.8"):
        res = await sb.exec(["python3", "-c", CONNECT, host, "53"], timeout_s=10)
        assert res.stdout.startswith("REFUSED") and res.wall_s < 5, describe(res)
    res = await sb.exec("getent hosts example.com", timeout_s=10)
    assert res.exit_code != 0 and res.stdout == "", describe(res)
    await sandboxes.close_and_check(sb)


async def test_only_a_loopback_interface_exists(sandboxes: Sandboxes) -> None:
    sb = await sandboxes.open()
    res = await sb.exec("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")
    assert res.ok and res.stdout.split() == ["lo"], describe(res)
    host_ifaces = Path("/proc/net/dev").read_text().splitlines()[2:]
    assert len(host_ifaces) >= 1  # the host has interfaces the sandbox must not see
    res = await sb.exec("command -v ip >/dev/null || exit 99; ip -o link | awk -F': ' '{print $2}'")
    if res.exit_code != 99:
        assert res.ok and res.stdout.split() == ["lo"], describe(res)
    await sandboxes.close_and_check(sb)


async def test_the_hosts_abstract_unix_sockets_are_not_reachable(sandboxes: Sandboxes) -> None:
    """Abstract unix sockets belong to the network namespace; the host's stay out of reach."""
    name = new_marker("unix")
    srv = _Listener(socket.AF_UNIX, "\0" + name)
    try:
        sb = await sandboxes.open()
        res = await sb.exec(
            [
                "python3",
                "-c",
                "import socket, sys\n"
                "s = socket.socket(socket.AF_UNIX)\n"
                "try:\n"
                "    s.connect('\\0' + sys.argv[1]); print('CONNECTED', s.recv(100))\n"
                "except OSError as e:\n"
                "    print('REFUSED', e.errno)\n",
                name,
            ]
        )
        assert res.ok and res.stdout.startswith("REFUSED"), describe(res)
        await asyncio.sleep(0.2)
        assert srv.accepted == 0
        await sandboxes.close_and_check(sb)
    finally:
        srv.close()


# ---- reading the host ---------------------------------------------------------------------


async def test_host_secrets_are_not_mounted(sandboxes: Sandboxes) -> None:
    sb = await sandboxes.open()
    res = await sb.exec("cat /etc/shadow /etc/gshadow /root/.bash_history /root/.ssh/id_rsa")
    assert res.exit_code != 0 and res.stdout == "", describe(res)
    shadow = Path("/etc/shadow").read_text() if Path("/etc/shadow").exists() else ""
    root_line = next((x for x in shadow.splitlines() if x.startswith("root:")), None)
    if root_line:
        assert root_line not in res.stdout
    # /etc inside is the sandbox's own: the host's passwd is not it
    res = await sb.exec("cat /etc/passwd; cat /etc/hostname; ls -A /etc")
    host_users = {x.split(":")[0] for x in Path("/etc/passwd").read_text().splitlines() if x}
    inside_users = {x.split(":")[0] for x in res.stdout.splitlines() if x.count(":") >= 6}
    assert res.ok and inside_users and inside_users <= {"root", "sandbox"}, describe(res)
    assert host_users - {"root", "sandbox"}, "the host has no other users: the check shows nothing"
    for secret in ("shadow", "gshadow", "sudoers", "ssh"):
        assert secret not in res.stdout.split(), describe(res)
    await sandboxes.close_and_check(sb)


async def test_root_home_and_work_show_only_the_interpreter(sandboxes: Sandboxes) -> None:
    """Only the interpreter's directories (and the dirs leading to them) are visible."""
    sb = await sandboxes.open()
    allowed = set()
    for prefix in {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}:
        allowed |= {str(p) for p in [prefix, *prefix.parents]}
    for top in ("/root", "/work", "/home", "/var", "/opt", "/srv", "/mnt"):
        host = Path(top)
        if not host.is_dir():
            continue
        res = await sb.exec(["ls", "-A", top])
        inside = set(res.stdout.split())
        visible = {str(host / name) for name in inside}
        hidden_ok = {v for v in visible if v in allowed}
        assert visible == hidden_ok, f"{top} shows {sorted(visible - hidden_ok)} inside"
    # this project's tests, sources and the shared notes are out of reach
    for path in (HERE, HERE.parent.parent, Path("/work/main/src"), Path("/work/shared")):
        res = await sb.exec(["test", "-e", str(path)])
        assert res.exit_code == 1, f"{path} is visible inside the sandbox"
    # the state root where every sandbox's workspace lives is not visible either
    state_dir = sb._dir  # type: ignore[attr-defined]
    for path in (state_dir, state_dir.parent, Path(sb.workspace)):
        res = await sb.exec(["test", "-e", str(path)])
        assert res.exit_code == 1, f"{path} is visible inside the sandbox"
    await sandboxes.close_and_check(sb)


async def test_host_proc_is_not_visible(sandboxes: Sandboxes, canaries: Canaries) -> None:
    sb = await sandboxes.open()
    res = await sb.exec("ls /proc | grep -E '^[0-9]+$' | wc -l; ps -eo args")
    count = int(res.stdout.split()[0])
    assert res.ok and count <= 6, describe(res)
    assert canaries.marker not in res.stdout
    host_init = Path("/proc/1/cmdline").read_bytes()
    res = await sb.exec("cat /proc/1/cmdline; echo; tr '\\0' '\\n' < /proc/1/environ")
    assert host_init.replace(b"\0", b"").decode(errors="replace") not in res.stdout.replace(
        "\0", ""
    )
    # the environment of the host's processes (this one's, say) is nowhere inside
    for key, value in os.environ.items():
        if len(value) >= 8 and key not in ("PATH", "HOME", "LANG", "USER", "PWD", "SHLVL"):
            assert f"{key}={value}" not in res.stdout, f"the host's {key} is visible inside"
    await sandboxes.close_and_check(sb)


async def test_environment_is_explicit(
    sandboxes: Sandboxes, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = new_marker("secret")
    monkeypatch.setenv("ROLLBOX_HOSTILE_SECRET", secret)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    sb = await sandboxes.open()
    res = await sb.exec(
        "env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done",
        env={"MINE": "given"},
    )
    assert res.exit_code == 0, describe(res)
    assert "MINE=given" in res.stdout  # what is passed arrives
    assert secret not in res.stdout and "ROLLBOX_HOSTILE_SECRET" not in res.stdout, describe(res)
    # nor through a file the command could find
    res = await sb.exec(f"grep -rl {secret} /tmp /workspace /run /etc 2>/dev/null; true")
    assert secret not in res.stdout
    await sandboxes.close_and_check(sb)


async def test_a_sandbox_cannot_see_another(sandboxes: Sandboxes) -> None:
    marker = new_marker("other")
    first = await sandboxes.open()
    second = await sandboxes.open()
    res = await first.exec(
        f"echo {marker} > /workspace/{marker}; echo {marker} > /tmp/{marker}; "
        f"(exec -a {marker} sleep 300 &); echo planted"
    )
    assert res.ok and res.stdout == "planted\n", describe(res)
    assert (Path(first.workspace) / marker).exists()  # type: ignore[attr-defined]
    ws1 = str(first.workspace)  # type: ignore[attr-defined]
    # the marker is put together inside, so that this command's own text does not hold it
    half = len(marker) // 2
    res = await second.exec(
        f"m={marker[:half]}; m=$m{marker[half:]}; "
        f"ls -A /workspace /tmp; ps -eww -o args; test -e {ws1} && echo SEES-HOST-PATH; "
        'grep -rl "$m" /workspace /tmp /run /dev/shm 2>/dev/null; '
        "ls /proc/*/root/workspace 2>/dev/null; true"
    )
    # signals from the second cannot reach the first's processes (same host uid)
    await second.exec("kill -9 -1 2>/dev/null; pkill -9 -f rbhostile; true", timeout_s=3)
    still = await first.exec(f"pgrep -f {marker} >/dev/null && echo ALIVE")
    assert still.stdout == "ALIVE\n", describe(still)
    await sandboxes.close_and_check(second)
    await sandboxes.close_and_check(first, marker)
    await assert_next_sandbox_clean(sandboxes, marker)


# ---- writing outside the workspace, planting files for later runs -------------------------


async def test_the_system_is_read_only(sandboxes: Sandboxes) -> None:
    marker = new_marker("plant")
    sb = await sandboxes.open()
    targets = [
        f"/{marker}",
        f"/usr/{marker}",
        f"/usr/bin/{marker}",
        f"/etc/{marker}",
        f"/bin/{marker}",
        f"/lib/{marker}",
        f"/run/{marker}",
        f"/run/rollbox/{marker}",
        f"/proc/{marker}",
        f"/dev/{marker}",
        f"/dev/pts/{marker}",
        f"{sys.prefix}/{marker}",
        f"{sys.base_prefix}/lib/{marker}.pth",
    ]
    for t in targets:
        res = await sb.exec(f"echo x > {t}")
        assert res.exit_code != 0, f"wrote {t} inside the sandbox"
    # changing what is there fails too: the interpreter, the shell, the agent
    site = next(Path(sys.prefix).glob("lib/python3*/site-packages"))
    agents = ["/run/rollbox-agent", "/run/rollbox-agent.sh", "/run/rollbox-bash"]
    for t in [f"{site}/sitecustomize.py", "/usr/bin/bash", *agents, "/etc/passwd"]:
        res = await sb.exec(f"echo 'import os' >> {t}")
        assert res.exit_code != 0, f"appended to {t} inside the sandbox"
    res = await sb.exec("mount -o remount,rw /usr 2>&1 || echo refused")
    assert "refused" in res.stdout
    for t in targets:
        assert not Path(t).exists(), f"{t} appeared on the host"
    assert (
        not (site / "sitecustomize.py").exists()
        or marker not in (site / "sitecustomize.py").read_text()
    )
    await sandboxes.close_and_check(sb, marker)


@pytest.mark.parametrize("where", ["/dev/shm", "/dev"])
async def test_dev_is_no_way_around_the_disk_limit(sandboxes: Sandboxes, where: str) -> None:
    """Regression: /dev (and /dev/shm in it) was a tmpfs owned by the sandbox user and sized at
    half the host's RAM, so commands could store far more than disk_mb there."""
    sb = await sandboxes.open(disk_mb=64, fsize_mb=256, memory_mb=512)
    res = await sb.exec(
        f"dd if=/dev/zero of={where}/big bs=1M count=100 2>&1; stat -c %s {where}/big", timeout_s=10
    )
    await sandboxes.close_and_check(sb)
    stored = int(res.stdout.split()[-1]) if res.stdout.split()[-1].isdigit() else 0
    assert stored <= 64 << 20, f"{stored >> 20} MB stored in {where} with disk_mb=64"


async def test_files_planted_in_tmp_and_the_workspace_are_gone_next_time(
    sandboxes: Sandboxes, tmp_path: Path
) -> None:
    marker = new_marker("plant")
    source = tmp_path / "ws"
    source.mkdir()
    (source / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (source / "keep.txt").write_text("original\n")
    host_tmp_before = set(os.listdir("/tmp"))

    sb = await sandboxes.open(source)
    res = await sb.exec(
        f"echo {marker} > /tmp/{marker}; mkdir -p /tmp/.{marker}/x; "
        f"echo {marker} > /dev/shm/{marker} 2>/dev/null; "
        f"echo 'import os  # {marker}' > calc.py; rm keep.txt; echo {marker} > new.txt; "
        f"mkfifo /tmp/{marker}.fifo; ln -s /etc/passwd /tmp/{marker}.link; echo done"
    )
    assert res.ok and res.stdout == "done\n", describe(res)
    # the host's copy and host /tmp are untouched, even while the sandbox lives
    assert (source / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (source / "keep.txt").read_text() == "original\n"
    assert not (source / "new.txt").exists()
    assert not Path(f"/tmp/{marker}").exists()
    await sandboxes.close_and_check(sb, marker)
    assert not {n for n in set(os.listdir("/tmp")) - host_tmp_before if marker in n}

    # the next sandbox from the same source (the cached layer) starts from the original
    nxt = await sandboxes.open(source)
    res = await nxt.exec("cat calc.py keep.txt; ls -A")
    assert res.ok, describe(res)
    assert res.stdout.startswith("def add(a, b):\n    return a + b\noriginal\n"), describe(res)
    assert "new.txt" not in res.stdout and marker not in res.stdout
    await sandboxes.close_and_check(nxt)
    await assert_next_sandbox_clean(sandboxes, marker)


# ---- signals and ptrace -------------------------------------------------------------------


async def test_kill_everything_inside_spares_the_host(
    sandboxes: Sandboxes, canaries: Canaries
) -> None:
    sb = await sandboxes.open()
    targets = " ".join(str(p) for p in [*canaries.pids, os.getpid(), 1])
    res = await sb.exec(
        f"for p in {targets}; do kill -9 $p 2>/dev/null && echo killed $p; done; "
        "kill -9 -1; pkill -9 -f sleep; true",
        timeout_s=3,
    )
    # reported (its own exit, killed, or timed out), never a hang or a crash of the machinery
    assert res.exit_code is not None or res.signal == signal.SIGKILL, describe(res)
    assert res.wall_s < 3 + 3, describe(res)
    for p in canaries.pids:
        assert f"killed {p}\n" not in res.stdout, describe(res)
    assert canaries.alive(), "kill -9 -1 in a sandbox killed a host process"
    assert host_pid_alive(os.getpid())
    # the sandbox survives it (its PID 1 cannot be killed from inside)
    after = await sb.exec("echo alive")
    assert after.ok and after.stdout == "alive\n", describe(after)
    await sandboxes.close_and_check(sb)
    assert canaries.alive()


@pytest.mark.parametrize("agent", ["compiled", "bash"])
async def test_kill_everything_inside_is_reported_promptly(
    sandboxes: Sandboxes, agent: str
) -> None:
    """Regression: `kill -9 -1` killed the agent's per-command supervisor, so exec() waited out
    the whole wall limit and reported a command that had exited at once as timed out."""
    sandboxes.agent = agent
    sb = await sandboxes.open()
    res = await sb.exec("kill -9 -1; echo still here; exit 3", timeout_s=8)
    await sandboxes.close_and_check(sb)
    # promptly, and not as a timeout: its own exit 3, or (its reporter being dead) as killed
    assert not res.timed_out and res.wall_s < 3, describe(res)
    assert res.exit_code == 3 or (res.exit_code is None and res.signal == 9), describe(res)
    assert res.stdout == "still here\n", describe(res)


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["compiled", "bash"])
async def test_killing_its_own_reporter_does_not_fake_success(
    sandboxes: Sandboxes, agent: str
) -> None:
    sandboxes.agent = agent
    sb = await sandboxes.open()
    for cmd in ("kill -9 $PPID; exit 3", "kill -9 -1; exit 3", "kill -STOP $PPID; exit 3"):
        res = await sb.exec(cmd, timeout_s=3)
        # never success: its own exit 3 (the compiled agent, PID 1, cannot be signalled from
        # inside), killed (bash's per-command reporter is gone), or held until the wall limit
        assert not res.ok, f"{cmd!r} was reported as a success: {describe(res)}"
        assert res.exit_code in (3, None), describe(res)
        assert res.wall_s < 3 + 3, describe(res)
    after = await sb.exec("echo alive")
    assert after.ok and after.stdout == "alive\n", describe(after)
    await sandboxes.close_and_check(sb)


async def test_ptrace_of_host_processes_is_impossible(
    sandboxes: Sandboxes, canaries: Canaries
) -> None:
    sb = await sandboxes.open()
    attach = (
        "import ctypes, sys\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "for pid in map(int, sys.argv[1:]):\n"
        "    rc = libc.ptrace(16, pid, 0, 0)\n"  # PTRACE_ATTACH
        "    print(pid, rc, ctypes.get_errno())\n"
    )
    pids = [str(p) for p in [*canaries.pids, os.getpid()]]
    res = await sb.exec(["python3", "-c", attach, *pids])
    assert res.ok, describe(res)
    for line in res.stdout.splitlines():
        _pid, rc, err = line.split()
        assert rc == "-1" and int(err) in (1, 3), describe(res)  # EPERM or ESRCH
    for tool in (f"gdb -batch -p {pids[0]}", f"strace -p {pids[1]}"):
        res = await sb.exec(f"command -v {tool.split()[0]} >/dev/null || exit 0; timeout 5 {tool}")
        assert not res.timed_out, describe(res)
    for p in canaries.pids:
        status = Path(f"/proc/{p}/status").read_text()
        assert "TracerPid:\t0" in status, f"host process {p} is being traced"
    assert canaries.alive()
    await sandboxes.close_and_check(sb)


async def test_commands_run_unprivileged(sandboxes: Sandboxes) -> None:
    sb = await sandboxes.open()
    res = await sb.exec("id -u; id -g; grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs)' "
                        "/proc/self/status")  # fmt: skip
    lines = res.stdout.split("\n")
    assert res.ok and lines[0] != "0" and lines[1] != "0", describe(res)
    caps = dict(line.split(":\t") for line in lines[2:] if ":\t" in line)
    assert caps["CapEff"] == "0000000000000000", describe(res)
    assert caps["CapPrm"] == "0000000000000000", describe(res)
    assert caps["CapAmb"] == "0000000000000000", describe(res)
    # on the host, every process of the sandbox runs as the unprivileged sandbox user
    await sb.exec("sleep 5 &")
    group = sb._group  # type: ignore[attr-defined]
    pids = group.procs()
    assert pids
    for p in host_processes():
        if p.pid in pids:
            assert p.uid == 65534, f"{p} runs as host uid {p.uid}"
    # and nothing gives root back: no setuid helper works, no new user namespace as root
    res = await sb.exec("su -c id root </dev/null 2>&1; sudo -n id 2>&1; "
                        "unshare -r id 2>&1; true")  # fmt: skip
    assert "uid=0" not in res.stdout, describe(res)
    await sandboxes.close_and_check(sb)


FORGE = r"""
id=$(ls /run/rollbox | sed -n 's/\.req$//p' | sort -n | tail -1)
fd=$(tr '\0' '\n' </proc/1/environ | sed -n 's/^RB_EVT_FD=//p')
line="done $id 0"
timeout 10 gdb -p 1 -batch -ex "call (long)write($fd, \"$line\\n\", ${#line} + 1)" >/dev/null 2>&1
sleep 2
echo real end
exit 7
"""


@pytest.mark.parametrize("agent", ["compiled", "bash"])
async def test_a_command_cannot_forge_its_result_through_the_agent(
    sandboxes: Sandboxes, agent: str
) -> None:
    """Regression: the agent (PID 1) ran as the commands' user and was ptrace-able, so a command
    could make it write 'done <id> 0' on the event pipe: exit 0 reported for a command that went
    on to exit 7. (gdb plays the attacker; ptrace of the agent itself is checked too.)"""
    sandboxes.agent = agent
    sb = await sandboxes.open()
    has_gdb = await sb.exec("command -v gdb")
    if not has_gdb.ok:
        pytest.skip("no gdb on this host to play the attacker")
    res = await sb.exec(FORGE, timeout_s=20)
    assert res.exit_code == 7 and res.stdout == "real end\n", describe(res)
    # nor can it attach to the agent or read its descriptors (which hold the event pipe)
    attach = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.ptrace(16, 1, 0, 0), ctypes.get_errno())\n"
        "try:\n"
        "    os.open('/proc/1/fd/' + os.environ['FD'], os.O_WRONLY); print('OPENED')\n"
        "except OSError as e:\n"
        "    print('REFUSED', e.errno)\n"
    )
    fd = await sb.exec("tr '\\0' '\\n' </proc/1/environ | sed -n 's/^RB_EVT_FD=//p'")
    res = await sb.exec(["python3", "-c", attach], env={"FD": fd.stdout.strip() or "2"})
    first, second = res.stdout.splitlines()
    assert first.split()[0] == "-1" and second.startswith("REFUSED"), describe(res)
    await sandboxes.close_and_check(sb)


async def test_closing_during_a_command_reports_a_sandbox_error(sandboxes: Sandboxes) -> None:
    sb = await sandboxes.open()
    running = asyncio.create_task(sb.exec("sleep 100", timeout_s=60))
    await asyncio.sleep(0.5)
    t0 = time.monotonic()
    await sandboxes.close_and_check(sb)
    assert time.monotonic() - t0 < 10
    try:
        res = await asyncio.wait_for(running, 10)
    except SandboxError:
        pass
    else:  # reported as data is fine too, but not as success
        assert not res.ok, describe(res)
    with pytest.raises(SandboxError):
        await sb.exec("true")


async def test_a_command_killed_by_a_signal_is_reported_with_it(sandboxes: Sandboxes) -> None:
    """A command killed by a signal (not by us) is reported with that signal."""
    sb = await sandboxes.open()
    res = await sb.exec("kill -SEGV $$")
    assert res.signal == signal.SIGSEGV and res.exit_code is None, describe(res)
    res = await sb.exec("kill -TERM $$")
    assert res.signal == signal.SIGTERM and not res.timed_out, describe(res)
    await sandboxes.close_and_check(sb)
