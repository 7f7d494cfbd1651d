"""Pagination helpers for list endpoints."""

from pager.pages import page_count
from pager.slicing import page_info, page_slice

__all__ = ["page_count", "page_info", "page_slice"]
