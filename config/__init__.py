"""Django project wiring: settings, urls, the Celery app, WSGI/ASGI.

Only wiring lives here; behaviour lives in ``arena``. Importing the package loads the Celery app so
that ``shared_task`` binds to it.
"""

from config.celery import app as celery_app

__all__ = ["celery_app"]
