import json
from urllib.parse import urljoin

import requests

from . import config


def fetch_usage(month: str) -> list[dict]:
    settings = config.load()
    resp = requests.get(urljoin(settings.api_url, f"usage/{month}"), timeout=30)
    resp.raise_for_status()
    return json.loads(resp.text)["rows"]
