"""Single-source search over a Network."""

import heapq
import itertools


def shortest_tree(network, source):
    """Fastest travel times from ``source``.

    Returns ``(minutes, previous)``: ``minutes[place]`` is the shortest travel time from
    ``source`` to every reachable place, and ``previous[place]`` the place just before it on
    one fastest route (``source`` itself has no entry in ``previous``).
    """
    minutes = {source: 0}
    previous = {}
    settled = set()
    tie = itertools.count()
    frontier = [(0, next(tie), source)]
    while frontier:
        _, _, place = heapq.heappop(frontier)
        if place in settled:
            continue
        settled.add(place)
        so_far = minutes[place]
        for neighbour, road in network.neighbours(place):
            if neighbour in settled:
                continue
            candidate = so_far + road
            if neighbour not in minutes or candidate < minutes[neighbour]:
                minutes[neighbour] = candidate
                previous[neighbour] = place
                heapq.heappush(frontier, (road, next(tie), neighbour))
    return minutes, previous
