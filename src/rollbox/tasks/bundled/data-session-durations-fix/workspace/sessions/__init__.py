"""Session analytics for the product event stream."""
