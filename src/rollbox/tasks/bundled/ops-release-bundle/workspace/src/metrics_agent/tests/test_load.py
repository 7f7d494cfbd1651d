from metrics_agent.collectors import load


def test_load1():
    assert load.load1() >= 0
