import csv
import io

import jinja2

from app.models import UsageRow
from app.client import fetch_usage


def render(month: str, template_dir: str) -> str:
    rows = [UsageRow(**r) for r in fetch_usage(month)]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(template_dir))
    return env.get_template("report.html").render(month=month, rows=rows)


def to_csv(rows) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf)
    for r in rows:
        writer.writerow([r.customer, r.units])
    return buf.getvalue()


def chart(rows, path):
    # heavy imports only when a chart is requested
    import numpy as np
    from PIL import Image

    data = np.array([r.units for r in rows], dtype="uint8").reshape(1, -1)
    Image.fromarray(data).save(path)
