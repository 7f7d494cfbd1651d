from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml


@dataclass
class Settings:
    api_url: str
    template_dir: Path


def load(path: str | None = None) -> Settings:
    path = path or os.environ.get("REPORT_CONFIG", "config.yaml")
    with open(path, encoding="utf-8") as fh:
        raw = yaml.safe_load(fh)
    return Settings(api_url=raw["api_url"], template_dir=Path(raw["templates"]))
