"""Services: every write to the arena's rows. Keyword-only, typed, named ``<entity>_<action>``.

Must not import the API, views or ``arena.tasks``: tasks import services, and services send tasks
by name through the Celery app (``arena.services.queue``); an import-linter contract keeps it so.
"""
