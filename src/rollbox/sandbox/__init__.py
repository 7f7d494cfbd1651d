"""Sandboxes: isolated execution environments behind one async seam."""

from rollbox.sandbox.base import Entry, ExecResult, Mount, Sandbox, SandboxFactory, Snapshot
from rollbox.sandbox.config import (
    BwrapConfig,
    Factory,
    Limits,
    LocalConfig,
    SandboxConfig,
    make_sandbox,
)
from rollbox.sandbox.local import LocalSandbox

__all__ = [
    "BwrapConfig",
    "Entry",
    "ExecResult",
    "Factory",
    "Limits",
    "LocalConfig",
    "LocalSandbox",
    "Mount",
    "Sandbox",
    "SandboxConfig",
    "SandboxFactory",
    "Snapshot",
    "backend_config",
    "make_sandbox",
]


def backend_config(name: str) -> BwrapConfig | LocalConfig:
    """The config for a backend named on the command line: 'bwrap' (default) or 'local'."""
    from rollbox.errors import ConfigError

    if name == "bwrap":
        return BwrapConfig()
    if name == "local":
        return LocalConfig()
    raise ConfigError(f"unknown sandbox backend {name!r}: use 'bwrap' or 'local'")
