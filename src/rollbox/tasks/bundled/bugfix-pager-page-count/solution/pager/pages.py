"""How many pages a result set needs."""


def page_count(total_items, per_page):
    """Number of pages needed to show ``total_items`` items, ``per_page`` per page."""
    if per_page <= 0:
        raise ValueError("per_page must be positive")
    if total_items < 0:
        raise ValueError("total_items must not be negative")
    return (total_items + per_page - 1) // per_page
