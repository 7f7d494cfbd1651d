"""Parity helper."""


def is_even(n):
    """Return True if the integer n is even, otherwise False."""
    raise NotImplementedError
