"""Hostile code against the bwrap sandbox: links and `../` in files copied out (THREATS.md A).

The sandbox plants links (absolute, relative, to directories, chains), FIFOs and odd paths in
its workspace; the host's read_file / write_file / list / snapshot must only ever touch
regular files beneath the workspace, refuse links (SandboxError), refuse paths that leave it
(ValueError), and never read or write the host through them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from pathlib import Path

import pytest

from rollbox.errors import SandboxError
from tests.sandbox.test_hostile_support import (
    Sandboxes,
    describe,
    needs_bwrap,
    new_marker,
    sandboxes,
)

__all__ = ["sandboxes"]  # the fixture, imported for pytest
pytestmark = [needs_bwrap, pytest.mark.timeout(120)]

PLANT = """
ln -s /etc/passwd passwd_link
ln -s /etc etc_link
ln -s {host_dir} host_dir_link
ln -s ../../../../../../../../etc/passwd relative_link
mkdir -p real/sub && echo inside > real/sub/file.txt
ln -s real real_link
ln -s real/sub/file.txt file_link
ln -s chain1 chain2 && ln -s chain2 chain1
ln -s {host_file} host_file_link
echo planted
"""


@pytest.fixture
def host_dir(tmp_path: Path) -> Path:
    """A directory on the host (outside every sandbox) with a file the sandbox must not read."""
    d = tmp_path / "host-only"
    d.mkdir()
    (d / "secret.txt").write_text("host secret\n")
    return d


async def _planted(sandboxes: Sandboxes, host_dir: Path) -> object:
    sb = await sandboxes.open()
    res = await sb.exec(
        PLANT.format(host_dir=host_dir, host_file=host_dir / "secret.txt"), timeout_s=30
    )
    assert res.ok and res.stdout == "planted\n", describe(res)
    return sb


@pytest.mark.parametrize(
    "path",
    [
        "passwd_link",  # absolute link to a host file
        "relative_link",  # relative link climbing out
        "host_file_link",  # link to a file of the host by its host path
        "etc_link/passwd",  # through a link to a host directory
        "host_dir_link/secret.txt",
        "real_link/sub/file.txt",  # through a link that stays inside: refused all the same
        "file_link",
        "chain1",  # a loop of links
    ],
)
async def test_read_file_refuses_links(sandboxes: Sandboxes, host_dir: Path, path: str) -> None:
    sb = await _planted(sandboxes, host_dir)
    with pytest.raises(SandboxError):
        await sb.read_file(path)  # type: ignore[attr-defined]
    # the real file behind the inside link is readable by its real path: refusal is of links
    assert await sb.read_file("real/sub/file.txt") == b"inside\n"  # type: ignore[attr-defined]
    await sandboxes.close_and_check(sb)


@pytest.mark.parametrize(
    "path",
    ["../x", "../../etc/passwd", "/etc/passwd", "real/../../x", "real/../passwd_link", "", "."],
)
async def test_paths_that_leave_the_workspace_are_refused(
    sandboxes: Sandboxes, host_dir: Path, path: str
) -> None:
    sb = await _planted(sandboxes, host_dir)
    with pytest.raises(ValueError):
        await sb.read_file(path)  # type: ignore[attr-defined]
    if path not in ("", "."):
        with pytest.raises(ValueError):
            await sb.write_file(path, b"x")  # type: ignore[attr-defined]
    with pytest.raises(ValueError):
        await sb.exec("true", cwd="../..")  # type: ignore[attr-defined]
    assert (host_dir / "secret.txt").read_text() == "host secret\n"
    await sandboxes.close_and_check(sb)


async def test_write_file_through_planted_links_leaves_the_host_untouched(
    sandboxes: Sandboxes, host_dir: Path
) -> None:
    marker = new_marker("w")
    sb = await _planted(sandboxes, host_dir)
    # through a link to a host directory: must not create the file there
    for rel in (f"host_dir_link/{marker}", f"etc_link/{marker}", f"real_link/{marker}"):
        with pytest.raises((SandboxError, OSError)):
            await sb.write_file(rel, b"x")  # type: ignore[attr-defined]
    assert not (host_dir / marker).exists() and not Path(f"/etc/{marker}").exists()
    assert sorted(os.listdir(host_dir)) == ["secret.txt"]
    # onto a link: the link is replaced by a file, its target is not written
    await sb.write_file("host_file_link", b"replaced")  # type: ignore[attr-defined]
    await sb.write_file("passwd_link", b"replaced")  # type: ignore[attr-defined]
    assert (host_dir / "secret.txt").read_text() == "host secret\n"
    assert "replaced" not in Path("/etc/passwd").read_text()
    assert await sb.read_file("host_file_link") == b"replaced"  # type: ignore[attr-defined]
    assert not (Path(sb.workspace) / "host_file_link").is_symlink()  # type: ignore[attr-defined]
    await sandboxes.close_and_check(sb)


async def test_write_file_through_a_planted_link_raises_a_sandbox_error(
    sandboxes: Sandboxes, host_dir: Path
) -> None:
    """Regression: write_file let a bare NotADirectoryError through for a planted link to a
    directory, where read_file raises SandboxError; callers catching SandboxError crashed."""
    sb = await _planted(sandboxes, host_dir)
    try:
        await sb.write_file("host_dir_link/new.txt", b"x")  # type: ignore[attr-defined]
    except SandboxError:
        pass
    except OSError as e:
        raise AssertionError(f"raised {type(e).__name__}: {e}, not SandboxError") from e
    else:
        raise AssertionError("wrote through a link")
    finally:
        await sandboxes.close_and_check(sb)
    assert not (host_dir / "new.txt").exists()


async def test_list_does_not_follow_links_in_the_tree(sandboxes: Sandboxes, host_dir: Path) -> None:
    sb = await _planted(sandboxes, host_dir)
    entries = {e.path: e for e in await sb.list()}  # type: ignore[attr-defined]
    for name in ("passwd_link", "etc_link", "host_dir_link", "relative_link", "real_link",
                 "chain1", "host_file_link"):  # fmt: skip
        assert entries[name].kind == "link" and entries[name].size == 0, entries[name]
    assert entries["real/sub/file.txt"].kind == "file"
    assert not [p for p in entries if p.startswith(("etc_link/", "host_dir_link/", "real_link/"))]
    await sandboxes.close_and_check(sb)


@pytest.mark.parametrize("path", ["host_dir_link", "etc_link"])
async def test_list_of_a_planted_link_does_not_list_the_host(
    sandboxes: Sandboxes, host_dir: Path, path: str
) -> None:
    """Regression: list(path) rglob()bed workspace / path, so list('etc_link') walked the host's
    /etc and list('host_dir_link') a host directory."""
    sb = await _planted(sandboxes, host_dir)
    try:
        entries = await sb.list(path)  # type: ignore[attr-defined]
    except (SandboxError, ValueError):
        entries = []
    finally:
        await sandboxes.close_and_check(sb)
    names = [e.path for e in entries]
    assert not [n for n in names if n.endswith(("secret.txt", "passwd", "hostname"))], names[:20]


async def test_read_file_of_a_planted_fifo_does_not_hang(
    sandboxes: Sandboxes, host_dir: Path
) -> None:
    """A FIFO where the host expects a file (say, a results file) must not block the host.

    Regression: read_file opened it with a blocking open() before checking it was a regular
    file, and blocked the event loop until something wrote to it."""
    sb = await _planted(sandboxes, host_dir)
    res = await sb.exec("mkfifo results.json && echo ok")  # type: ignore[attr-defined]
    assert res.ok, describe(res)
    fifo = Path(sb.workspace) / "results.json"  # type: ignore[attr-defined]
    outcome: list[object] = []

    def read() -> None:
        try:
            outcome.append(asyncio.run(sb.read_file("results.json")))  # type: ignore[attr-defined]
        except BaseException as e:
            outcome.append(e)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(5)
    hung = reader.is_alive()
    if hung:  # unblock it: open the FIFO for writing, so the reader gets an end of file
        with contextlib.suppress(OSError):
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        reader.join(5)
    await sandboxes.close_and_check(sb)
    assert not hung, "read_file blocked on a FIFO planted by the sandbox"
    assert len(outcome) == 1 and isinstance(outcome[0], SandboxError), outcome


async def test_snapshot_and_fork_keep_links_as_links(sandboxes: Sandboxes, host_dir: Path) -> None:
    """Like an archive with links: the state carried to a fork holds links, not host files."""
    sb = await _planted(sandboxes, host_dir)
    child = sandboxes.adopt(await sb.fork())  # type: ignore[attr-defined]
    res = await child.exec(
        "readlink host_file_link passwd_link; cat host_file_link 2>&1; cat real/sub/file.txt"
    )
    assert res.stdout.splitlines()[:2] == [str(host_dir / "secret.txt"), "/etc/passwd"]
    assert "host secret" not in res.stdout and "inside\n" in res.stdout, describe(res)
    with pytest.raises(SandboxError):
        await child.read_file("host_file_link")
    entries = {e.path: e.kind for e in await child.list()}
    assert entries["host_file_link"] == "link" and entries["etc_link"] == "link"
    await sandboxes.close_and_check(child)
    await sandboxes.close_and_check(sb)
