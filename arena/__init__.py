"""The arena: bots and versions, round-robins, matches on Celery workers, the REST API.

Imports ``engine`` and ``sandbox``; nothing imports ``arena``.
"""
