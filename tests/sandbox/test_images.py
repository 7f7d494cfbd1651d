"""Environment images: built once per requirements, mounted read-only, importable."""

from __future__ import annotations

import time
import zipfile
from pathlib import Path

from rollbox.sandbox import BwrapConfig, make_sandbox
from rollbox.sandbox.images import build_image


def _wheel(dest: Path, name: str, version: str, source: str) -> Path:
    """A minimal pure-Python wheel, made here (the tests have no package index)."""
    dist = f"{name}-{version}.dist-info"
    path = dest / f"{name}-{version}-py3-none-any.whl"
    files = {
        f"{name}.py": source,
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    files[f"{dist}/RECORD"] = "".join(f"{n},,\n" for n in files) + f"{dist}/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as z:
        for n, text in files.items():
            z.writestr(n, text)
    return path


async def test_an_image_is_built_once_and_mounted_read_only(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _wheel(wheels, "rbximg", "1.0", "ANSWER = 42\n")
    cache = tmp_path / "cache"
    pip = ["--no-index", "--find-links", str(wheels)]
    t0 = time.perf_counter()
    image = build_image(["rbximg==1.0"], cache=cache, pip_args=pip)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = build_image(["rbximg==1.0"], cache=cache, pip_args=pip)
    assert again.path == image.path and time.perf_counter() - t0 < first / 5
    assert build_image(["rbximg==1.0", ""], cache=cache, pip_args=pip).key == image.key
    async with await make_sandbox(BwrapConfig(), None, mounts=image.mount()) as sb:
        res = await sb.exec(
            ["python", "-c", "import rbximg; print(rbximg.ANSWER)"], env=image.env()
        )
        assert res.stdout == "42\n", res.stderr
        res = await sb.exec("touch /opt/rollbox/env/planted", env=image.env())
        assert res.exit_code != 0


def test_a_failed_build_says_why_and_leaves_nothing(tmp_path: Path) -> None:
    import pytest

    from rollbox.errors import SandboxError

    cache = tmp_path / "cache"
    with pytest.raises(SandboxError, match="no-such-package-rbx"):
        build_image(["no-such-package-rbx==9.9"], cache=cache, pip_args=["--no-index"])
    assert [p for p in cache.iterdir() if not p.name.endswith(".lock")] == []
