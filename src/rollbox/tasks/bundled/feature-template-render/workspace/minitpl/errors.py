"""Errors raised while rendering templates."""


class TemplateError(Exception):
    """Raised for malformed templates and for values that cannot be resolved."""
