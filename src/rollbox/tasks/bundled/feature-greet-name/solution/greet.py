"""Greeting helper."""


def greet(name):
    """Return a greeting for name, like "Hello, Ada!"."""
    return "Hello, " + name + "!"
