import pytest

from routes import Network, NoRoute, Planner, shortest_tree


def lcg(seed):
    state = seed
    while True:
        state = (state * 1103515245 + 12345) % 2**31
        yield state


def random_network(seed, places=9, roads=22, directed=False):
    rnd = lcg(seed)
    net = Network()
    names = [f"p{i}" for i in range(places)]
    for name in names:
        net.add_place(name)
    for _ in range(roads):
        a = names[next(rnd) % places]
        b = names[next(rnd) % places]
        if a != b:
            net.add_road(a, b, next(rnd) % 25, one_way=directed)
    return net, names


def floyd_warshall(net, names):
    inf = float("inf")
    d = {(a, b): (0 if a == b else inf) for a in names for b in names}
    for a in names:
        for b, m in net.neighbours(a):
            d[a, b] = min(d[a, b], m)
    for k in names:
        for i in names:
            for j in names:
                if d[i, k] + d[k, j] < d[i, j]:
                    d[i, j] = d[i, k] + d[k, j]
    return d


def route_cost(net, stops):
    total = 0
    for a, b in zip(stops, stops[1:]):
        roads = dict(net.neighbours(a))
        assert b in roads, f"no road {a}->{b}"
        total += roads[b]
    return total


@pytest.mark.parametrize("seed", range(1, 31))
@pytest.mark.parametrize("directed", [False, True])
def test_matches_exhaustive_search(seed, directed):
    net, names = random_network(seed, directed=directed)
    best = floyd_warshall(net, names)
    planner = Planner(net)
    for origin in names:
        times = planner.travel_times(origin)
        expected = {b: best[origin, b] for b in names if best[origin, b] != float("inf")}
        assert times == expected
        for dest in names:
            if best[origin, dest] == float("inf"):
                with pytest.raises(NoRoute):
                    planner.plan(origin, dest)
                continue
            route = planner.plan(origin, dest)
            assert route.minutes == best[origin, dest]
            assert route.stops[0] == origin and route.stops[-1] == dest
            assert route_cost(net, route.stops) == route.minutes


def test_long_first_leg_short_total():
    net = Network()
    net.add_road("airport", "ring", 30)
    net.add_road("ring", "centre", 4)
    net.add_road("airport", "tunnel", 31)
    net.add_road("tunnel", "centre", 2)
    net.add_road("centre", "museum", 1)
    route = Planner(net).plan("airport", "museum")
    assert route.minutes == 34
    assert route.stops == ("airport", "tunnel", "centre", "museum")
    minutes, previous = shortest_tree(net, "airport")
    assert minutes["centre"] == 33
    assert previous["centre"] == "tunnel"
    assert "airport" not in previous


def test_one_way_and_closed_roads():
    net = Network()
    net.add_road("a", "b", 5, one_way=True)
    net.add_road("b", "c", 5)
    net.add_road("a", "c", 20)
    planner = Planner(net)
    assert planner.plan("a", "c").minutes == 10
    assert planner.plan("c", "a").stops == ("c", "a")
    net.close_road("b", "c")
    assert planner.plan("a", "c").minutes == 20
    with pytest.raises(NoRoute):
        planner.plan("b", "a")


def test_parallel_roads_and_trivial_routes():
    net = Network()
    net.add_road("x", "y", 9)
    net.add_road("y", "x", 4)
    net.add_place("island")
    planner = Planner(net)
    assert planner.plan("x", "y").minutes == 4
    assert planner.plan("x", "x").stops == ("x",)
    assert planner.plan("x", "x").minutes == 0
    with pytest.raises(NoRoute):
        planner.plan("x", "island")
    with pytest.raises(ValueError):
        planner.plan("x", "atlantis")
    with pytest.raises(ValueError):
        net.add_road("x", "z", -1)
