"""rollbox's two small C programs, built once per version of their source, then cached.

- `agent.c`: a sandbox's PID 1. It starts and forks in a fraction of the time of the bash
  agent (agent.sh).
- `launch.c`: what starts bubblewrap as root: it moves itself into the sandbox's cgroups (which
  a process may do without the kernel's global lock) and drops to the sandbox's user.

On a host without a C compiler the bash agent, `chroot --userspec` and a move of the agent into
its cgroups by pid stand in (doctor says which is in use). Binaries are cached under
`images.cache_root()/agent`, named by a hash of the source and the compiler, so that an edited
source or another compiler builds anew.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rollbox.sandbox import images

SOURCES = {
    "agent": Path(__file__).with_name("agent.c"),
    "launch": Path(__file__).with_name("launch.c"),
}
CFLAGS = ("-O2", "-Wall", "-Wextra", "-Werror")


@dataclass(frozen=True)
class Built:
    path: Path | None  # the binary, or None when it could not be built
    why_not: str = ""  # why not, for doctor and for an error when it was asked for by name


NOT_BUILT = Built(None, "not looked for")
_built: dict[str, Built] = {}


def compiler() -> str | None:
    """The C compiler: $CC, else cc, gcc or clang."""
    env = os.environ.get("CC")
    if env:
        return shutil.which(env)
    for name in ("cc", "gcc", "clang"):
        found = shutil.which(name)
        if found:
            return found
    return None


def build(program: str = "agent", cache: Path | None = None) -> Built:
    """A program ("agent" or "launch"), from the cache or built now (once per process when
    cache is None)."""
    if cache is None and program in _built:
        return _built[program]
    result = _build(SOURCES[program], cache or images.cache_root() / "agent")
    if cache is None:
        _built[program] = result
    return result


def _writable_by_others(path: Path) -> str:
    """Why someone other than us could change `path` ("" if nobody can)."""
    st = path.stat()
    if st.st_uid != os.geteuid():
        return f"belongs to uid {st.st_uid}, not to us"
    if st.st_mode & 0o022:
        return f"is writable by others (mode {st.st_mode & 0o7777:o})"
    return ""


def _build(source_file: Path, cache: Path) -> Built:
    cc = compiler()
    if cc is None:
        if os.environ.get("CC"):
            return Built(None, f"the C compiler $CC={os.environ['CC']} is not found")
        return Built(None, "no C compiler (cc, gcc or clang): install gcc for faster sandboxes")
    source = source_file.read_bytes()
    key = hashlib.sha256(source + b"\0" + os.fsencode(os.path.realpath(cc))).hexdigest()[:16]
    binary = cache / f"rollbox-{source_file.stem}-{key}"
    try:
        cache.mkdir(parents=True, exist_ok=True, mode=0o755)
    except OSError as e:
        return Built(None, f"cannot write the agent's cache {cache}: {e.strerror}")
    # The launcher runs as root when rollbox does: only a cache nobody else can write is used.
    untrusted = _writable_by_others(cache)
    if untrusted:
        return Built(None, f"the agent's cache {cache} {untrusted}: not using it")
    if binary.is_file() and not _writable_by_others(binary) and os.access(binary, os.X_OK):
        return Built(binary)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f"{binary.name}.", dir=cache)
        os.close(fd)
    except OSError as e:
        return Built(None, f"cannot write the agent's cache {cache}: {e.strerror}")
    try:
        proc = subprocess.run(
            [cc, *CFLAGS, "-o", tmp, str(source_file)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if proc.returncode != 0:
            lines = proc.stderr.strip().splitlines() or ["(no message)"]
            first = next((x for x in lines if "error" in x), lines[0])
            return Built(None, f"{cc} could not build {source_file.name}: {first.strip()}")
        os.chmod(tmp, 0o755)
        os.replace(tmp, binary)  # atomic: a process that races this one gets a whole binary
    except (OSError, subprocess.TimeoutExpired) as e:
        return Built(None, f"{cc} could not build {source_file.name}: {e}")
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return Built(binary)
