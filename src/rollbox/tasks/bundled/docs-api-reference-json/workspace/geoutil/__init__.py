"""Small geodesy helpers."""
