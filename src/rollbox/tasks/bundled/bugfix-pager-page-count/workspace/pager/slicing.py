"""Cutting one page out of a list of items."""

from pager.pages import page_count


def page_slice(items, page, per_page):
    """The items shown on the 1-based ``page``.

    Page 1 of an empty list is an empty page; any other page outside 1..page_count
    raises IndexError.
    """
    pages = page_count(len(items), per_page)
    if page < 1 or page > max(pages, 1):
        raise IndexError(f"page {page} is out of range 1..{pages}")
    start = (page - 1) * per_page
    return items[start:start + per_page]


def page_info(total_items, page, per_page):
    """Metadata for a page: its number, the page count and whether more pages follow."""
    pages = page_count(total_items, per_page)
    return {"page": page, "pages": pages, "has_next": page < pages}
