"""The arena's web pages: server-rendered Django templates over the same selectors and services as
the API, htmx where a page updates itself, plain JavaScript for the replay viewer.

Views read through ``arena.selectors`` and write only through ``arena.services``. Must not import
``arena.api`` or ``arena.tasks``.
"""
