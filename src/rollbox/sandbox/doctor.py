"""`rollbox doctor`: which isolation and limit mechanisms are active on this host."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass

from rollbox.errors import SandboxError


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool  # False: not active / not enforced here
    detail: str


def host_checks() -> list[Check]:
    """What the bwrap backend would use here, without starting anything."""
    from rollbox.sandbox import bwrap, cgroups, layers

    checks: list[Check] = []
    exe = shutil.which("bwrap")
    if exe is None:
        checks.append(Check("bubblewrap", False, "not installed: apt-get install bubblewrap"))
        return checks
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
    checks.append(Check("bubblewrap", True, f"{version} at {exe}"))
    root = os.geteuid() == 0
    checks.append(
        Check(
            "user",
            True,
            f"sandboxes run as host uid {bwrap.NOBODY} (uid {bwrap.SANDBOX_UID} inside)"
            if root
            else f"sandboxes run as you (uid {os.geteuid()}), uid {bwrap.SANDBOX_UID} inside",
        )
    )
    checks.append(
        Check(
            "namespaces",
            True,
            "user (no nested user namespaces), pid, mount, network (loopback only), ipc, uts, "
            "cgroup; no capabilities; no new privileges",
        )
    )
    from rollbox.sandbox import seccomp

    filtered = seccomp.program() is not None
    checks.append(
        Check(
            "seccomp",
            filtered,
            "ptrace, process_vm_readv/writev denied between a sandbox's processes"
            if filtered
            else "no filter for this architecture: processes of one sandbox may trace each other",
        )
    )
    from rollbox.sandbox import agentbuild

    agent, launch = agentbuild.build("agent"), agentbuild.build("launch")
    if agent.path is not None:
        detail = f"compiled (agent.c), cached in {agent.path.parent}"
    else:
        detail = f"bash (agent.sh), slower to start and to run each command: {agent.why_not}"
    checks.append(Check("agent", agent.path is not None, detail))
    checks.append(
        Check(
            "launcher",
            launch.path is not None,
            "compiled (launch.c): bubblewrap and the agent are born in the sandbox's cgroups"
            if launch.path is not None
            else "chroot --userspec, and the agent is moved into its cgroups by pid (slower, "
            f"and the first move after a pause waits for the kernel): {launch.why_not}",
        )
    )
    host = cgroups.detect()
    if host.version:
        roots = {k: str(v) for k, v in host.v1_roots.items()} or {"unified": str(host.v2_root)}
        where = ", ".join(f"{k}={v}" for k, v in roots.items())
        checks.append(Check(f"cgroups v{host.version}", True, where))
    else:
        checks.append(Check("cgroups", False, host.why_not))
    overlay, why = layers.overlay_supported()
    checks.append(
        Check(
            "workspaces",
            overlay,
            "overlay over cached layers, writable layer on a size-capped tmpfs"
            if overlay
            else f"copied ({why})",
        )
    )
    enforced = {
        "wall_s": (True, "from outside (the host kills the command's process group)"),
        "cpu_s": (
            (True, "from outside (cgroup CPU accounting), and RLIMIT_CPU per process")
            if host.version
            else (False, "only RLIMIT_CPU per process (no cgroup accounting)")
        ),
        "memory_mb": (bool(host.version), "cgroup memory limit on the whole sandbox"),
        "pids": (bool(host.version), "cgroup pids limit on the whole sandbox"),
        "cpus": (bool(host.version), "cgroup CPU quota on the whole sandbox"),
        "disk_mb": (overlay, "size of the writable tmpfs (workspace changes and /tmp)"),
        "fsize_mb": (True, "RLIMIT_FSIZE per process"),
        "nofile": (True, "RLIMIT_NOFILE per process"),
        "output_bytes": (True, "output read as it is produced and cut at the cap"),
    }
    for name, (ok, how) in enforced.items():
        checks.append(Check(f"limit {name}", ok, how if ok else f"NOT enforced: {how}"))
    return checks


async def smoke_test() -> Check:
    """Start a real sandbox, run `true`, close it: the proof that it all works."""
    from rollbox.sandbox import BwrapConfig, make_sandbox

    t0 = time.perf_counter()
    try:
        sb = await make_sandbox(BwrapConfig(allow_unenforced=True))
        try:
            res = await sb.exec(["true"])
        finally:
            await sb.close()
    except SandboxError as e:
        return Check("smoke test", False, str(e))
    ms = (time.perf_counter() - t0) * 1000
    if not res.ok:
        return Check("smoke test", False, f"`true` failed in a sandbox: {res}")
    return Check("smoke test", True, f"create + exec true + close in {ms:.1f} ms")
