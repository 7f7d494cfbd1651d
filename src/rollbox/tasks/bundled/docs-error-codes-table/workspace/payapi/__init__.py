"""Payments API server."""
