"""Collect host metrics."""
from metrics_agent.collectors import load


def collect():
    return [{"metric": "load1", "value": load.load1()}]
