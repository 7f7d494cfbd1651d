"""Workspaces as stacks of read-only layers plus one writable layer.

A layer is an immutable directory: a workspace brought in once (cached by content), or a
snapshot of a sandbox's writable state. With overlayfs (the host lets us mount: root), a
sandbox's workspace is an overlay of its layers under a fresh upper directory on a size-capped
tmpfs, so starting and forking copy nothing. Elsewhere the layers are copied into a plain
directory (the fallback), and the disk size is not capped.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import hashlib
import os
import shutil
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path

from rollbox.errors import SandboxError

MNT_DETACH = 2
MAX_STACK = 16  # layers under one overlay before a fork flattens them
_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def mount(source: str, target: Path, fstype: str, options: str, flags: int = 0) -> None:
    rc = _libc.mount(
        source.encode(), str(target).encode(), fstype.encode(), flags, options.encode()
    )
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {fstype} on {target}: {os.strerror(err)}")


MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC = 1, 32, 4096, 16384


def bind(source: Path, target: Path, *, readonly: bool) -> None:
    """Bind-mount a directory (read-only takes a second step, as the kernel wants it)."""
    mount(str(source), target, "none", "", MS_BIND | MS_REC)
    if readonly:
        mount("none", target, "none", "", MS_REMOUNT | MS_BIND | MS_RDONLY)


def umount(target: Path) -> None:
    if _libc.umount2(str(target).encode(), MNT_DETACH) != 0:
        err = ctypes.get_errno()
        if err not in (22, 2):  # EINVAL: not a mount point; ENOENT: gone
            raise OSError(err, f"umount {target}: {os.strerror(err)}")


def mounts_beneath(base: Path) -> list[Path]:
    """Mount points at or beneath `base`, deepest first (to unmount in order)."""
    found = []
    prefix = str(base).rstrip("/") + "/"
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4].replace("\\040", " ")
            if point == str(base) or point.startswith(prefix):
                found.append(Path(point))
    return sorted(found, key=lambda p: len(p.parts), reverse=True)


def overlay_supported() -> tuple[bool, str]:
    """Whether this process may mount overlays (and tmpfs) on the host."""
    if os.geteuid() != 0:
        return False, "mounting overlays needs root; workspaces are copied instead"
    try:
        with open("/proc/filesystems") as f:
            if not any(line.split()[-1] == "overlay" for line in f if line.strip()):
                return False, "the kernel has no overlay filesystem; workspaces are copied instead"
    except OSError:
        return False, "cannot read /proc/filesystems"
    return True, ""


def copy_tree(src: Path, dst: Path, uid: int | None, *, merge: bool = False) -> None:
    """Copy regular files, directories and links (as links), owned by `uid` if given.

    Overlay whiteouts (0/0 character devices) and opaque directories in `src` are kept as
    such, so that an upper directory can become a layer; with `merge`, they are applied to
    what `dst` already holds instead (flattening a stack, lowest layer first).
    """
    dst.mkdir(parents=True, exist_ok=True)
    top = os.stat(src)
    own = (uid, uid) if uid is not None else (top.st_uid, top.st_gid)  # else: keep the owner
    if os.geteuid() == 0:
        os.chown(dst, *own)
    with os.scandir(src) as it:
        for e in it:
            s, d = Path(e.path), dst / e.name
            st = e.stat(follow_symlinks=False)
            opaque = False
            with contextlib.suppress(OSError):
                opaque = os.getxattr(s, "trusted.overlay.opaque") == b"y"
            whiteout = stat.S_ISCHR(st.st_mode) and st.st_rdev == 0
            if (
                merge
                and (whiteout or opaque or not stat.S_ISDIR(st.st_mode))
                and (d.exists() or d.is_symlink())
            ):
                if d.is_dir() and not d.is_symlink():
                    shutil.rmtree(d)
                else:
                    d.unlink()
            if stat.S_ISDIR(st.st_mode):
                copy_tree(s, d, uid, merge=merge)
                os.chmod(d, stat.S_IMODE(st.st_mode) | 0o700)
                if opaque and not merge:
                    os.setxattr(d, "trusted.overlay.opaque", b"y")
            elif stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(s), d)
                if os.geteuid() == 0:
                    os.lchown(d, *(uid, uid) if uid is not None else (st.st_uid, st.st_gid))
            elif stat.S_ISREG(st.st_mode):
                shutil.copyfile(s, d, follow_symlinks=False)
                os.chmod(d, stat.S_IMODE(st.st_mode) | 0o600)
                if os.geteuid() == 0:
                    os.chown(d, *(uid, uid) if uid is not None else (st.st_uid, st.st_gid))
            elif whiteout and not merge:
                os.mknod(d, stat.S_IFCHR | 0o000, 0)  # a whiteout: "deleted in this layer"


def tree_signature(root: Path) -> str:
    """A cheap identity for a directory's current content: paths, sizes, times, modes."""
    h = hashlib.sha256()
    stack = [root]
    while stack:
        d = stack.pop()
        with os.scandir(d) as it:
            for e in sorted(it, key=lambda e: e.name):
                st = e.stat(follow_symlinks=False)
                h.update(f"{e.path}\0{st.st_mode}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
                if stat.S_ISDIR(st.st_mode):
                    stack.append(Path(e.path))
    return h.hexdigest()[:24]


@dataclass
class Layer:
    """An immutable directory in the store, shared by every sandbox stacked on it."""

    path: Path
    parents: tuple[Layer, ...] = ()  # layers beneath it, top first
    refs: int = 0
    key: str | None = None

    @property
    def stack(self) -> list[Path]:
        """This layer and everything beneath it, top first."""
        out = [self.path]
        for p in self.parents:
            out.extend(p.stack)
        return out


@dataclass
class LayerStore:
    """The layers of one rollbox process, under its state directory."""

    root: Path
    uid: int | None
    max_cached: int = 256
    _by_key: dict[str, Layer] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _n: int = 0

    def _new_dir(self, prefix: str) -> Path:
        with self._lock:
            self._n += 1
            n = self._n
        return self.root / f"{prefix}{n}"

    async def from_dir_async(self, src: Path) -> Layer:
        """from_dir, without blocking the event loop when a copy must be made."""
        import asyncio

        key = tree_signature(src)
        layer = self._cached(key)
        return layer if layer is not None else await asyncio.to_thread(self.from_dir, src, key)

    def _cached(self, key: str) -> Layer | None:
        with self._lock:
            layer = self._by_key.get(key)
            if layer is not None and layer.path.exists():
                layer.refs += 1
                return layer
        return None

    def from_dir(self, src: Path, key: str | None = None) -> Layer:
        """The layer holding a copy of `src`, made once per content (by signature)."""
        key = key or tree_signature(src)
        cached = self._cached(key)
        if cached is not None:
            return cached
        path = self._new_dir("base")
        tmp = path.with_name(path.name + ".tmp")
        try:
            copy_tree(src, tmp, self.uid)
            tmp.rename(path)
        except OSError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise SandboxError(f"could not bring in the workspace {src}: {e}") from e
        layer = Layer(path, refs=1, key=key)
        with self._lock:
            self._by_key[key] = layer
            self._evict()
        return layer

    def empty(self) -> Layer:
        with self._lock:
            layer = self._by_key.get("empty")
            if layer is None:
                path = self.root / "empty"
                path.mkdir(exist_ok=True)
                if self.uid is not None:
                    os.chown(path, self.uid, self.uid)
                layer = self._by_key["empty"] = Layer(path, key="empty")
            layer.refs += 1
            return layer

    def snapshot(self, upper: Path, beneath: Layer) -> Layer:
        """A new layer from a writable directory's current content, stacked on `beneath`."""
        path = self._new_dir("snap")
        copy_tree(upper, path, None)
        with self._lock:
            beneath.refs += 1
        layer = Layer(path, parents=(beneath,), refs=1)
        if len(layer.stack) > MAX_STACK:
            flat = self._new_dir("flat")
            for p in reversed(layer.stack):
                copy_tree(p, flat, None, merge=True)
            self.release(layer)
            layer = Layer(flat, refs=1)
        return layer

    def retain(self, layer: Layer) -> Layer:
        with self._lock:
            layer.refs += 1
        return layer

    def release(self, layer: Layer) -> None:
        """Drop one reference; snapshot layers go when unused, cached bases when evicted."""
        with self._lock:
            layer.refs -= 1
            gone = layer.refs <= 0 and layer.key is None
        if gone:
            shutil.rmtree(layer.path, ignore_errors=True)
            for p in layer.parents:
                self.release(p)

    def _evict(self) -> None:
        if len(self._by_key) <= self.max_cached:
            return
        for key, layer in list(self._by_key.items()):
            if layer.refs <= 0 and key != "empty":
                del self._by_key[key]
                shutil.rmtree(layer.path, ignore_errors=True)
                if len(self._by_key) <= self.max_cached:
                    return
