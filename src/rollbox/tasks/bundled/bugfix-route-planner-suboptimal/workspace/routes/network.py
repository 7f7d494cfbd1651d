"""A road network: places joined by roads with a travel time in minutes."""


class Network:
    def __init__(self):
        self._roads = {}  # place -> {neighbour: minutes}

    def add_place(self, place):
        self._roads.setdefault(place, {})

    def add_road(self, a, b, minutes, one_way=False):
        """Add a road from ``a`` to ``b`` (and back unless ``one_way``).

        When two roads join the same places, the faster one is kept.
        """
        if minutes < 0:
            raise ValueError("travel time cannot be negative")
        self.add_place(a)
        self.add_place(b)
        self._set(a, b, minutes)
        if not one_way:
            self._set(b, a, minutes)

    def _set(self, a, b, minutes):
        current = self._roads[a].get(b)
        if current is None or minutes < current:
            self._roads[a][b] = minutes

    def close_road(self, a, b, one_way=False):
        self._roads.get(a, {}).pop(b, None)
        if not one_way:
            self._roads.get(b, {}).pop(a, None)

    def neighbours(self, place):
        """``(neighbour, minutes)`` pairs for the roads leaving ``place``, by neighbour name."""
        return sorted(self._roads.get(place, {}).items())

    def __contains__(self, place):
        return place in self._roads

    def places(self):
        return sorted(self._roads)
