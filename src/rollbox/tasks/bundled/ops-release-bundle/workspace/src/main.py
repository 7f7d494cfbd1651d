#!/usr/bin/env python3
"""metrics-agent entry point."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))

from metrics_agent import collect  # noqa: E402

for sample in collect():
    print(json.dumps(sample, sort_keys=True))
