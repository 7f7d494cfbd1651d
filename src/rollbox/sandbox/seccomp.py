"""A seccomp filter for sandboxes: no process may trace or read/write another's memory.

Processes in one sandbox run as the same user, so without this a command could ptrace the
judge's check running beside it (or change its exit status). The filter is a small classic-BPF
program handed to bubblewrap (`--seccomp FD`): `ptrace`, `process_vm_readv` and
`process_vm_writev` fail with EPERM; on x86-64 the x32 system-call range is refused too, so the
numbers cannot be reached another way. Other architectures get no filter (and doctor says so).
"""

from __future__ import annotations

import errno
import platform
import struct

_LD_ABS_W = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_KILL = 0x80000000  # SECCOMP_RET_KILL_PROCESS

# (audit arch, [denied syscall numbers], x32 bit or None)
_ARCH = {
    "x86_64": (0xC000003E, [101, 310, 311], 0x40000000),
    "aarch64": (0xC00000B7, [117, 270, 271], None),
}


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program() -> bytes | None:
    """The filter for this machine's architecture, or None where there is none."""
    spec = _ARCH.get(platform.machine())
    if spec is None:
        return None
    arch, denied, x32 = spec
    deny = _ERRNO | errno.EPERM
    prog = [
        _insn(_LD_ABS_W, 0, 0, 4),  # seccomp_data.arch
        _insn(_JEQ, 1, 0, arch),
        _insn(_RET, 0, 0, _KILL),  # another ABI: refuse outright
        _insn(_LD_ABS_W, 0, 0, 0),  # seccomp_data.nr
    ]
    if x32 is not None:
        prog.append(_insn(_JGE, len(denied) + 1, 0, x32))  # x32 numbers: deny
    for i, nr in enumerate(denied):
        prog.append(_insn(_JEQ, len(denied) - i, 0, nr))
    prog.append(_insn(_RET, 0, 0, _ALLOW))
    prog.append(_insn(_RET, 0, 0, deny))
    return b"".join(prog)
