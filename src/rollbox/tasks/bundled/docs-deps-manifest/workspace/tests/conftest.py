import pytest


@pytest.fixture
def sample_rows():
    from app.models import UsageRow
    return [UsageRow("acme", 3), UsageRow("globex", 5)]
