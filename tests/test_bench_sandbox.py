"""The sandbox benchmark's own machinery: the bare-bwrap baseline, failure figures, batches.

The benchmark itself takes minutes (`rollbox bench sandbox`); these check its parts quickly.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import os
import shutil
import tempfile
from pathlib import Path
from types import ModuleType

import pytest

from rollbox.bench import available

BENCH_FILE = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_sandbox.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rollbox_bench_sandbox_test", BENCH_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # as rollbox.bench loads it: not in sys.modules
    return module


def test_listed() -> None:
    assert "sandbox" in available()


def _sandbox_dir(tmp_path: Path) -> Path:
    sdir = tmp_path / "state" / "s7"
    for d in ("rw/tmp", "ws/sub", "ctl"):
        (sdir / d).mkdir(parents=True)
    os.chmod(sdir / "rw" / "tmp", 0o1777)
    (sdir / "ws" / "sub" / "f.txt").write_text("x")
    return sdir


def test_bare_bwrap_replays_the_backend_with_true(bench: ModuleType, tmp_path: Path) -> None:
    sdir = _sandbox_dir(tmp_path)
    argv = [
        "chroot", "--userspec=65534:65534", "/",
        "/usr/bin/bwrap", "--unshare-all", "--uid", "1000", "--cap-drop", "ALL",
        "--die-with-parent", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
        "--bind", str(sdir / "rw" / "tmp"), "/tmp",
        "--bind", str(sdir / "ws"), "/workspace",
        "--ro-bind", str(sdir / "ctl"), "/run/rollbox",
        "--setenv", "RB_INFO_FD", "7",
        "--info-fd", "7", "--block-fd", "8",
        "/bin/bash", "--noprofile", "--norc", "/run/rollbox-agent.sh",
    ]  # fmt: skip
    root = tmp_path / "bare"
    bare = bench.BareBwrap(argv, "/usr/bin/bwrap", sdir, root)
    assert bare.argv[:4] == ["chroot", "--userspec=65534:65534", "/", "/usr/bin/bwrap"]
    assert bare.argv[-1] == "/bin/true"
    assert bare.agent == ["/bin/bash", "--noprofile", "--norc", "/run/rollbox-agent.sh"]
    assert "--info-fd" not in bare.argv and "--block-fd" not in bare.argv
    assert bare.argv[-4:-1] == ["--setenv", "RB_INFO_FD", "7"]  # harmless, kept
    # the sandbox's own directories are replaced by copies, with their modes
    assert not any(str(sdir) in a for a in bare.argv)
    i = bare.argv.index("/tmp")
    assert bare.argv[i - 1] == str(root / "rw" / "tmp")
    assert (root / "rw" / "tmp").stat().st_mode & 0o7777 == 0o1777
    assert (root / "ws" / "sub" / "f.txt").read_text() == "x"
    assert bare.argv[bare.argv.index("/workspace") - 1] == str(root / "ws")
    # the system binds pass through untouched
    assert bare.argv[10:16] == ["--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--frobnicate"], "cannot parse"),
        (["--seccomp", "9"], "cannot replay"),  # without the program to replay
        (["--ro-bind-data", "9", "/etc/x"], "cannot replay"),
    ],
)
def test_bare_bwrap_refuses_what_it_cannot_replay(
    bench: ModuleType, tmp_path: Path, extra: list[str], message: str
) -> None:
    sdir = _sandbox_dir(tmp_path)
    argv = ["/usr/bin/bwrap", "--unshare-all", *extra, "/bin/bash", "agent.sh"]
    with pytest.raises(RuntimeError, match=message):
        bench.BareBwrap(argv, "/usr/bin/bwrap", sdir, tmp_path / "bare")


def test_bare_bwrap_replays_a_seccomp_filter_through_a_pipe_of_its_own(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["/usr/bin/bwrap", "--unshare-all", "--seccomp", "9", "--info-fd", "7", "agent"]
    sdir = _sandbox_dir(tmp_path)
    bare = bench.BareBwrap(argv, "/usr/bin/bwrap", sdir, tmp_path / "b", b"P" * 16)
    seen: list[tuple[list[str], bytes]] = []

    def run(args: list[str], *, pass_fds: tuple[int, ...], **kwargs: object) -> object:
        (fd,) = pass_fds
        assert args[args.index("--seccomp") + 1] == str(fd)
        seen.append((args, os.read(fd, 100)))
        return type("Done", (), {"returncode": 0})()

    monkeypatch.setattr(bench.subprocess, "run", run)
    bare()
    bare()
    assert [data for _, data in seen] == [b"P" * 16, b"P" * 16]
    assert bare.argv == ["/usr/bin/bwrap", "--unshare-all", "--seccomp", "-1", "/bin/true"]


def test_bare_bwrap_from_a_real_sandbox_runs(bench: ModuleType) -> None:
    """The baseline follows the backend: whatever the backend passes bwrap, it must replay it."""
    if shutil.which("bwrap") is None:
        pytest.skip("no bubblewrap")
    from rollbox.sandbox import BwrapConfig

    # where the bench puts it: bwrap may run as the sandbox's uid, which must reach the copies
    tmp = Path(tempfile.mkdtemp(prefix="rollbox-test-bare-"))
    try:
        os.chmod(tmp, 0o711)
        bare = asyncio.run(bench._bare_bwrap(BwrapConfig(), tmp / "bare"))
        assert bare.argv[-1] == "/bin/true"
        bare()  # raises if bwrap fails
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_the_launcher_becomes_a_plain_user_switch_in_the_baseline(
    bench: ModuleType, tmp_path: Path
) -> None:
    launcher = "/var/cache/rollbox/agent/rollbox-launch-0123456789abcdef"
    argv = [
        launcher, "--wait-fd", "9", "--cgroup", "/sys/fs/cgroup/pids/rollbox/x/tasks",
        "--private-mounts", "--mount", "tmpfs", "/x/rw", "size=1m",
        "--mkdir", "/x/rw/t", "755", "-1",
        "--user", "65534:65534", "--", "/usr/bin/bwrap", "--unshare-all", "/run/agent",
    ]  # fmt: skip
    bare = bench.BareBwrap(argv, "/usr/bin/bwrap", _sandbox_dir(tmp_path), tmp_path / "b")
    assert Path(bare.argv[0]).name == "chroot"
    assert bare.argv[1:5] == ["--userspec=65534:65534", "--groups=65534", "/", "/usr/bin/bwrap"]
    assert not any("cgroup" in a or "wait-fd" in a or "/x/rw" in a for a in bare.argv)
    # not as root (no --user): bwrap is run directly
    argv = [launcher, "--cgroup", "/x/cgroup.procs", "--", "bwrap", "--unshare-all", "agent"]
    bare = bench.BareBwrap(argv, "bwrap", tmp_path / "state" / "s7", tmp_path / "c")
    assert bare.argv == ["bwrap", "--unshare-all", "/bin/true"]
    with pytest.raises(RuntimeError, match="cannot read"):
        bench.BareBwrap(
            [launcher, "--new-flag", "x", "--", "bwrap", "a"], "bwrap", tmp_path, tmp_path
        )


def test_bare_bwrap_needs_a_command(bench: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="no command"):
        bench.BareBwrap(["bwrap", "--unshare-all"], "bwrap", _sandbox_dir(tmp_path), tmp_path / "b")
    with pytest.raises(RuntimeError, match="no bwrap"):
        bench.BareBwrap(["sh", "-c", "true"], "/usr/bin/bwrap", tmp_path, tmp_path / "b")


def test_failed_figure_is_clear(bench: ModuleType) -> None:
    fig = bench._failed(
        "memory per idle sandbox", "KiB", OSError(24, "Too many open files"), max_value=2048.0
    )
    assert fig.met is False
    assert math.isnan(fig.value)
    assert "FAILED" in fig.name and "Too many open files" in fig.name
    assert fig.target == "value <= 2048 KiB"


def test_gather_batches_stops_at_the_first_failing_batch(bench: ModuleType) -> None:
    calls: list[int] = []

    async def make(i: int) -> int:
        calls.append(i)
        if i == 60:
            raise OSError("no more")
        return i

    done, errors = asyncio.run(bench._gather_batches(list(range(200)), make, stop_on_error=True))
    assert len(calls) == 2 * bench.BATCH  # the batch with the failure ran, no further one
    assert len(done) == 2 * bench.BATCH - 1 and len(errors) == 1


def test_sleep_baseline_is_small_and_cleans_up(bench: ModuleType) -> None:
    if shutil.which("sleep") is None:
        pytest.skip("no sleep(1)")
    before = set(bench._children())
    per = bench._sleep_memory_kb(20)
    assert math.isfinite(per)
    assert set(bench._children()) <= before, "the 20 sleep processes are all gone"
