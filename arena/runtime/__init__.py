"""Playing matches with real bot processes: specs of who sits where, the sandbox-to-referee seat
adapter, the bot cache, and one function that plays a match.

Works without a database (``manage.py play`` uses it directly): must not import Django models,
services or selectors.
"""
