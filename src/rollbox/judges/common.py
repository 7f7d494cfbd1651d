"""What every judge does: lay out the candidate's workspace and a pristine copy of the tests."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from rollbox.judges.base import Changes
from rollbox.sandbox.base import ExecResult, Mount, Sandbox
from rollbox.sandbox.images import MOUNT_POINT as IMAGE_MOUNT
from rollbox.sandbox.images import Image, build_image_async
from rollbox.tasks.loader import materialize, read_tree
from rollbox.tasks.model import Task

DETAIL_CHARS = 2000


def safe_relpath(rel: str) -> str:
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise ValueError(f"unsafe path in changes: {rel!r}")
    return str(p)


@contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A temporary directory, readable by the sandbox's user (mounted read-only there)."""
    d = Path(tempfile.mkdtemp(prefix=f"rollbox-{prefix}-"))
    d.chmod(0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def lay_out_candidate(task: Task, changes: Changes, dest: Path) -> Path:
    """The pristine workspace with the candidate's changes applied, written into `dest`."""
    materialize(task, dest, reference=False)
    for rel, data in changes.items():
        target = dest / safe_relpath(rel)
        if data is None:
            if target.is_file() or target.is_symlink():
                target.unlink()
            continue
        if target.is_symlink() or target.is_dir():
            raise ValueError(f"changes write over a link or directory: {rel!r}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return dest


def lay_out_tests(task: Task, dest: Path) -> Path:
    """A pristine copy of the task's hidden tests (never the candidate's)."""
    dest.mkdir(parents=True, exist_ok=True)
    for rel, data in read_tree(task.tests_dir).items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return dest


def changes_between(before: dict[str, bytes], after: dict[str, bytes]) -> Changes:
    """What turned `before` into `after`, file by file."""
    changes: Changes = {rel: data for rel, data in after.items() if before.get(rel) != data}
    changes.update({rel: None for rel in before if rel not in after})
    return changes


def tail(res: ExecResult, limit: int = DETAIL_CHARS) -> str:
    text = (res.stdout + ("\n" if res.stdout and res.stderr else "") + res.stderr).strip()
    if res.timed_out:
        text = f"[timed out after {res.wall_s:.1f}s]\n{text}"
    return text if len(text) <= limit else "…" + text[-limit:]


class TaskEnvironment:
    """The task's environment image (if it names packages), as mounts and PYTHONPATH."""

    def __init__(self, image: Image | None) -> None:
        self.image = image

    @classmethod
    async def of(cls, task: Task) -> TaskEnvironment:
        pkgs = task.spec.environment.python_packages
        return cls(await build_image_async(list(pkgs)) if pkgs else None)

    def mounts(self) -> dict[str, Mount]:
        return self.image.mount() if self.image else {}

    def pythonpath(self, sandbox: Sandbox, *first: str) -> str:
        """PYTHONPATH: `first`, then the image (as this sandbox sees it)."""
        parts = list(first)
        if self.image is not None:
            parts.append(sandbox.path(IMAGE_MOUNT))
        return ":".join(parts)
