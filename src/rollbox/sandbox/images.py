"""Environment images: the Python packages a task needs, built once, mounted read-only.

An image is a directory made by `pip install --target`, named by the hash of what went into
it (the requirements, the interpreter, the platform), so a second task with the same needs
uses the same directory. Builds are atomic (a temporary directory renamed into place) and
serialised by a file lock, so concurrent builders of one image wait for each other.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rollbox.errors import SandboxError
from rollbox.sandbox.base import Mount

MOUNT_POINT = "/opt/rollbox/env"


def cache_root() -> Path:
    """Where rollbox caches what it builds ($ROLLBOX_CACHE, else /var/cache/rollbox as root,
    else the user's cache directory). World-traversable when root: sandboxes run as another user
    and must reach what is in it."""
    env = os.environ.get("ROLLBOX_CACHE")
    if env:
        return Path(env)
    if os.geteuid() == 0:
        return Path("/var/cache/rollbox")
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "rollbox"


def default_cache() -> Path:
    return cache_root() / "images"


@dataclass(frozen=True)
class Image:
    key: str
    path: Path
    requirements: tuple[str, ...]

    def mount(self) -> dict[str, Mount]:
        return {MOUNT_POINT: Mount(self.path)}

    def env(self, base_pythonpath: str = "") -> dict[str, str]:
        return {"PYTHONPATH": ":".join(p for p in (MOUNT_POINT, base_pythonpath) if p)}


def image_key(requirements: Sequence[str], pip_args: Sequence[str] = ()) -> str:
    doc = {
        "requirements": sorted(r.strip() for r in requirements if r.strip()),
        "pip_args": list(pip_args),
        "python": list(sys.version_info[:2]),
        "platform": [platform.system(), platform.machine()],
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:20]


def build_image(
    requirements: Sequence[str],
    *,
    cache: Path | None = None,
    pip_args: Sequence[str] = (),
    timeout_s: float = 900,
) -> Image:
    """The image for these requirements, built now if it is not in the cache yet."""
    reqs = tuple(sorted(r.strip() for r in requirements if r.strip()))
    cache = cache or default_cache()
    key = image_key(reqs, pip_args)
    final = cache / key
    if (final / ".rollbox-image.json").is_file():
        return Image(key, final, reqs)
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / ".rollbox-image.json").is_file():
            return Image(key, final, reqs)
        tmp = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=cache))
        try:
            if reqs:
                cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-compile",
                       "--disable-pip-version-check", "--target", str(tmp), *pip_args,
                       *reqs]  # fmt: skip
                res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
                if res.returncode != 0:
                    raise SandboxError(
                        f"could not build the environment for {', '.join(reqs)}:\n"
                        + (res.stderr or res.stdout).strip()[-2000:]
                    )
            manifest = {"requirements": list(reqs), "pip_args": list(pip_args)}
            (tmp / ".rollbox-image.json").write_text(json.dumps(manifest))
            _make_readable(tmp)
            tmp.rename(final)
        except subprocess.TimeoutExpired:
            raise SandboxError(f"building the environment took over {timeout_s:g}s") from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return Image(key, final, reqs)


async def build_image_async(requirements: Sequence[str], **kwargs: object) -> Image:
    return await asyncio.to_thread(build_image, requirements, **kwargs)  # type: ignore[arg-type]


def _make_readable(root: Path) -> None:
    """Readable by the sandbox's user; nobody may write."""
    for dirpath, _, filenames in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                mode = os.stat(p).st_mode
                os.chmod(p, 0o755 if mode & 0o111 else 0o644)
