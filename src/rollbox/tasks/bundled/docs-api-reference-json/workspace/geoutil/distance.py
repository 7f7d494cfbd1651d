"""Great-circle distances and bearings on a spherical Earth.

All angles are in degrees; distances are in the requested unit.
"""
from __future__ import annotations

import math
from typing import Iterable

__all__ = [
    "EARTH_RADIUS_KM",
    "haversine",
    "initial_bearing",
    "path_length",
    "destination",
    "Point",
]

EARTH_RADIUS_KM = 6371.0088

_UNITS = {"km": 1.0, "mi": 0.621371, "nm": 0.539957}


def _to_rad(deg):
    return deg * math.pi / 180.0


def _scale(km, unit):
    try:
        return km * _UNITS[unit]
    except KeyError:
        raise ValueError(f"unknown unit {unit!r}") from None


def haversine(lat1: float, lon1: float, lat2: float, lon2: float, *,
              unit: str = "km", radius: float = EARTH_RADIUS_KM) -> float:
    """Return the great-circle distance between two points.

    ``radius`` is in kilometres whatever ``unit`` is.
    """
    p1, p2 = _to_rad(lat1), _to_rad(lat2)
    dp, dl = p2 - p1, _to_rad(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return _scale(2 * radius * math.asin(math.sqrt(a)), unit)


def initial_bearing(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Return the initial compass bearing, in [0, 360), from point 1 to point 2."""
    p1, p2 = _to_rad(lat1), _to_rad(lat2)
    dl = _to_rad(lon2 - lon1)
    x = math.sin(dl) * math.cos(p2)
    y = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    return (math.degrees(math.atan2(x, y)) + 360.0) % 360.0


def path_length(points: Iterable[tuple[float, float]], unit="km", closed: bool = False) -> float:
    """Return the total length of a path through ``points``.

    With ``closed=True`` the segment from the last point back to the first is included.
    """
    pts = list(points)
    if closed and pts:
        pts.append(pts[0])
    return sum(haversine(*a, *b, unit=unit) for a, b in zip(pts, pts[1:]))


def destination(lat, lon, bearing: float, distance: float, /,
                unit: str = "km") -> tuple[float, float]:
    """Return the point reached by travelling ``distance`` along ``bearing``."""
    d = distance / _scale(1.0, unit) / EARTH_RADIUS_KM
    p1, l1, b = _to_rad(lat), _to_rad(lon), _to_rad(bearing)
    p2 = math.asin(math.sin(p1) * math.cos(d) + math.cos(p1) * math.sin(d) * math.cos(b))
    l2 = l1 + math.atan2(math.sin(b) * math.sin(d) * math.cos(p1),
                         math.cos(d) - math.sin(p1) * math.sin(p2))
    return math.degrees(p2), normalize_lon(math.degrees(l2))


def normalize_lon(lon: float) -> float:
    """Wrap a longitude into [-180, 180). Internal helper, not exported."""
    return (lon + 180.0) % 360.0 - 180.0


class Point:
    """A latitude/longitude pair in degrees, with an optional label."""

    def __init__(self, lat: float, lon: float, label: str | None = None) -> None:
        if not Point.is_valid(lat, lon):
            raise ValueError("latitude must be within [-90, 90]")
        self.lat, self.lon, self.label = lat, lon, label

    def __repr__(self):
        return f"Point({self.lat}, {self.lon}, label={self.label!r})"

    @classmethod
    def from_string(cls, text: str, sep: str = ",") -> Point:
        """Parse ``"lat<sep>lon"`` into a Point."""
        lat, lon = (float(part) for part in text.split(sep))
        return cls(lat, lon)

    @staticmethod
    def is_valid(lat: float, lon: float) -> bool:
        """Return True if ``lat`` is a valid latitude."""
        return -90.0 <= lat <= 90.0

    def distance_to(self, other: Point, *, unit: str = "km") -> float:
        """Return the great-circle distance to ``other``."""
        return haversine(self.lat, self.lon, other.lat, other.lon, unit=unit)

    def bearing_to(self, other: Point) -> float:
        """Return the initial bearing towards ``other``."""
        return initial_bearing(self.lat, self.lon, other.lat, other.lon)

    def _key(self):
        return (self.lat, self.lon)
