"""Rendering of {{ path | filter }} placeholders."""

from minitpl.errors import TemplateError
from minitpl.filters import FILTERS


def render(template: str, context: dict) -> str:
    """Return template with every placeholder replaced by its value from context."""
    raise NotImplementedError
