"""Sandboxes: isolated execution environments behind one async seam."""

from rollbox.sandbox.base import ExecResult, Sandbox
from rollbox.sandbox.local import LocalSandbox

__all__ = ["ExecResult", "LocalSandbox", "Sandbox"]
