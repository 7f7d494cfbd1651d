"""Sandbox configuration: limits, and the backend chosen by config type."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from rollbox.sandbox.base import Mount, Sandbox


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Limits(_Config):
    """Resource limits of one sandbox (memory, processes, disk) and of each command in it."""

    wall_s: float = Field(60.0, gt=0, description="Wall clock per command, enforced from outside.")
    cpu_s: float = Field(60.0, gt=0, description="CPU seconds per command, enforced from outside.")
    memory_mb: int = Field(1024, gt=0, description="Memory of the whole sandbox.")
    pids: int = Field(256, gt=0, description="Processes and threads in the whole sandbox.")
    cpus: float = Field(
        1.0, gt=0, le=256, description="CPU cores the whole sandbox may use at once."
    )
    disk_mb: int = Field(512, gt=0, description="Size of the writable layer (workspace and /tmp).")
    fsize_mb: int = Field(256, gt=0, description="Largest file a command may write.")
    nofile: int = Field(1024, gt=0, description="Open files per process.")
    output_bytes: int = Field(1 << 20, gt=0, description="Bytes kept of each of stdout, stderr.")

    def merged(self, **overrides: float | int | None) -> Limits:
        """A copy with the given limits replaced (None: keep)."""
        changes = {k: v for k, v in overrides.items() if v is not None}
        return self.model_copy(update=changes) if changes else self


class BwrapConfig(_Config):
    """bubblewrap: every namespace unshared, read-only system, only the workspace writable."""

    type: Literal["bwrap"] = "bwrap"
    limits: Limits = Field(default_factory=Limits, description="Default limits.")
    allow_unenforced: bool = Field(
        False, description="Start even when a limit cannot be enforced on this host."
    )
    uid: int | None = Field(
        None, description="Host uid the sandbox runs as; default: 65534 as root, else yourself."
    )
    state_dir: Path | None = Field(None, description="Where live sandboxes keep their state.")
    agent: Literal["auto", "compiled", "bash"] = Field(
        "auto",
        description="The sandbox's PID 1: the compiled agent (built with the host's C compiler), "
        "the bash agent, or auto: compiled where a C compiler is found, else bash.",
    )


class LocalConfig(_Config):
    """No isolation at all: plain processes in a temporary copy. Development only."""

    type: Literal["local"] = "local"
    limits: Limits = Field(default_factory=Limits, description="Default limits.")


SandboxConfig = Annotated[BwrapConfig | LocalConfig, Field(discriminator="type")]


async def make_sandbox(
    config: BwrapConfig | LocalConfig,
    workspace: Path | None = None,
    *,
    mounts: Mapping[str, Mount] | None = None,
    limits: Limits | None = None,
) -> Sandbox:
    """Start a sandbox of the configured backend (heavy backends are imported lazily)."""
    if isinstance(config, LocalConfig):
        from rollbox.sandbox.local import LocalSandbox

        return LocalSandbox.create(workspace, mounts=mounts, limits=limits or config.limits)
    from rollbox.sandbox.bwrap import BwrapSandbox

    return await BwrapSandbox.create(config, workspace, mounts=mounts, limits=limits)


class Factory:
    """A SandboxFactory bound to one config: what judges and episodes are given."""

    def __init__(self, config: BwrapConfig | LocalConfig) -> None:
        self.config = config

    async def __call__(
        self,
        workspace: Path | None,
        *,
        mounts: Mapping[str, Mount] | None = None,
        limits: Limits | None = None,
    ) -> Sandbox:
        return await make_sandbox(self.config, workspace, mounts=mounts, limits=limits)


def limits_from_pairs(pairs: Sequence[str], base: Limits | None = None) -> Limits:
    """Parse `KEY=VALUE` pairs (as on the command line) into Limits."""
    from rollbox.errors import ConfigError

    base = base or Limits()
    fields = Limits.model_fields
    updates: dict[str, float] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in fields:
            raise ConfigError(
                f"bad limit {pair!r}: use KEY=VALUE with KEY one of {', '.join(fields)}"
            )
        try:
            updates[key] = float(value)
        except ValueError:
            raise ConfigError(f"bad limit {pair!r}: {value!r} is not a number") from None
    try:
        return Limits.model_validate({**base.model_dump(), **updates})
    except ValueError as e:
        raise ConfigError(f"bad limits: {e}") from None
