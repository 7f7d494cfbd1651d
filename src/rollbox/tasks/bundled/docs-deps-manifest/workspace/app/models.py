from typing import Optional

import attr
from dateutil import parser as dtparser


@attr.s(auto_attribs=True)
class UsageRow:
    customer: str
    units: int
    seen_at: Optional[str] = None

    def timestamp(self):
        return dtparser.isoparse(self.seen_at) if self.seen_at else None
