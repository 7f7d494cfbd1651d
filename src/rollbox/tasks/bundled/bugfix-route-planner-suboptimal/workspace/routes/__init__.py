"""Fastest routes through a road network."""

from routes.network import Network
from routes.planner import NoRoute, Planner, Route
from routes.search import shortest_tree

__all__ = ["Network", "NoRoute", "Planner", "Route", "shortest_tree"]
