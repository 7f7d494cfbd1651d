"""Route planning on top of the search."""

from dataclasses import dataclass

from routes.search import shortest_tree


class NoRoute(Exception):
    """There is no way to get from one place to the other."""


@dataclass(frozen=True)
class Route:
    minutes: float
    stops: tuple  # every place on the way, origin and destination included


class Planner:
    def __init__(self, network):
        self.network = network

    def _check(self, place):
        if place not in self.network:
            raise ValueError(f"unknown place: {place!r}")

    def plan(self, origin, destination):
        """The fastest Route from ``origin`` to ``destination``; NoRoute if unreachable."""
        self._check(origin)
        self._check(destination)
        minutes, previous = shortest_tree(self.network, origin)
        if destination not in minutes:
            raise NoRoute(f"no route from {origin} to {destination}")
        stops = [destination]
        while stops[-1] != origin:
            stops.append(previous[stops[-1]])
        return Route(minutes[destination], tuple(reversed(stops)))

    def travel_times(self, origin):
        """Minutes from ``origin`` to every reachable place (origin included, at 0)."""
        self._check(origin)
        minutes, _ = shortest_tree(self.network, origin)
        return dict(sorted(minutes.items()))
