"""File access beneath a directory that a sandbox controls: never follow its links."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path, PurePosixPath

from rollbox.errors import SandboxError

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _parts(rel: str) -> list[str]:
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise ValueError(f"path must stay inside the workspace: {rel!r}")
    return [x for x in p.parts if x != "."]


def _open_parent(base: Path, parts: list[str], create: bool) -> int:
    fd = os.open(base, _DIR)
    try:
        for name in parts[:-1]:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o755, dir_fd=fd)
            nfd = os.open(name, _DIR, dir_fd=fd)
            os.close(fd)
            fd = nfd
    except OSError:
        os.close(fd)
        raise
    return fd


def _refuse_links(rel: str, e: OSError) -> None:
    if e.errno in (errno.ELOOP, errno.ENOTDIR):  # a link where a file or directory should be
        raise SandboxError(f"{rel!r} is (or goes through) a link; links are refused") from None


def read_beneath(base: Path, rel: str, *, max_bytes: int | None = None) -> bytes:
    """Read a regular file beneath `base`; a link anywhere on the way is refused."""
    parts = _parts(rel)
    try:
        dfd = _open_parent(base, parts, create=False)
        try:
            # non-blocking: a FIFO planted there must not hang the host on open
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
            fd = os.open(parts[-1], flags, dir_fd=dfd)
        finally:
            os.close(dfd)
    except OSError as e:
        _refuse_links(rel, e)
        raise
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise SandboxError(f"{rel!r} is not a regular file")
        os.set_blocking(f.fileno(), True)
        if max_bytes is not None and st.st_size > max_bytes:
            raise SandboxError(f"{rel!r} is larger than {max_bytes} bytes")
        return f.read() if max_bytes is None else f.read(max_bytes + 1)[:max_bytes]


def kind_beneath(base: Path, rel: str) -> str | None:
    """What is at `rel` beneath `base` ('file', 'dir', 'link', 'other'), None if nothing;
    a link on the way is refused."""
    parts = [] if rel in (".", "") else _parts(rel)
    if not os.path.isdir(base):
        raise SandboxError(f"the workspace {base} is gone (the sandbox was closed)")
    if not parts:
        return "dir"
    try:
        dfd = _open_parent(base, parts, create=False)
    except FileNotFoundError:
        return None
    except OSError as e:
        _refuse_links(rel, e)
        raise
    try:
        st = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    finally:
        os.close(dfd)
    return (
        "link" if stat.S_ISLNK(st.st_mode)
        else "dir" if stat.S_ISDIR(st.st_mode)
        else "file" if stat.S_ISREG(st.st_mode)
        else "other"
    )  # fmt: skip


def write_beneath(base: Path, rel: str, data: bytes, *, uid: int | None = None) -> None:
    """Write a regular file beneath `base`, replacing whatever was there; links are refused."""
    parts = _parts(rel)
    try:
        dfd = _open_parent(base, parts, create=True)
    except OSError as e:
        _refuse_links(rel, e)
        raise
    try:
        try:
            os.unlink(parts[-1], dir_fd=dfd)
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            raise SandboxError(f"{rel!r} is a directory") from None
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(parts[-1], flags, 0o644, dir_fd=dfd)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if uid is not None:
                os.fchown(f.fileno(), uid, uid)
        if uid is not None:
            _chown_dirs(base, parts[:-1], uid)
    finally:
        os.close(dfd)


def _chown_dirs(base: Path, dirs: list[str], uid: int) -> None:
    fd = os.open(base, _DIR)
    try:
        for name in dirs:
            nfd = os.open(name, _DIR, dir_fd=fd)
            os.close(fd)
            fd = nfd
            st = os.fstat(fd)
            if st.st_uid != uid:
                os.fchown(fd, uid, uid)
    finally:
        os.close(fd)


def list_beneath(base: Path, rel: str = ".") -> list[tuple[str, str, int]]:
    """(path, kind, size) of everything beneath a directory of `base`, links not followed."""
    parts = [] if rel in (".", "") else _parts(rel)
    try:
        dfd = _open_parent(base, [*parts, "."], create=False)
    except OSError as e:
        _refuse_links(rel, e)
        raise
    out: list[tuple[str, str, int]] = []
    prefix = "/".join(parts)
    try:
        for root, dirs, files, rfd in os.fwalk(".", dir_fd=dfd, follow_symlinks=False):
            here = root[2:] if root.startswith("./") else ""
            for name in sorted(dirs + files):
                st = os.stat(name, dir_fd=rfd, follow_symlinks=False)
                kind = (
                    "link" if stat.S_ISLNK(st.st_mode)
                    else "dir" if stat.S_ISDIR(st.st_mode)
                    else "file" if stat.S_ISREG(st.st_mode)
                    else "other"
                )  # fmt: skip
                path = "/".join(x for x in (prefix, here, name) if x)
                out.append((path, kind, st.st_size if kind == "file" else 0))
    finally:
        os.close(dfd)
    return sorted(out)


def remove_beneath(base: Path, rel: str) -> None:
    """Remove a file (or link) beneath `base`; a link on the way is refused; absent is fine."""
    parts = _parts(rel)
    try:
        dfd = _open_parent(base, parts, create=False)
    except FileNotFoundError:
        return
    except OSError as e:
        _refuse_links(rel, e)
        raise
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(parts[-1], dir_fd=dfd)
    finally:
        os.close(dfd)
