"""Monthly usage reports for the billing team."""
