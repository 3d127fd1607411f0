"""The arena's management commands."""
