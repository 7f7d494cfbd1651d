"""tidewater: scrape and cache tide tables."""

__version__ = "1.4.9"

# oldest tidecore release this package works with
MIN_TIDECORE = "1.4.9"
