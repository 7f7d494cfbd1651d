"""Tide table parsing utilities."""
