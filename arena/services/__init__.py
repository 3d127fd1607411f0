"""Services: every write to the arena's rows. Keyword-only, typed, named ``<entity>_<action>``.

Must not import the API, views or ``arena.tasks`` at module level (tasks are enqueued through
``arena.services.queue``).
"""
