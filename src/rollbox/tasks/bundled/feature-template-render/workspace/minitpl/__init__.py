"""minitpl: tiny placeholder templates for notification messages."""

from minitpl.errors import TemplateError
from minitpl.filters import FILTERS
from minitpl.render import render

__all__ = ["FILTERS", "TemplateError", "render"]
