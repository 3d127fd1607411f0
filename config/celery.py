"""The Celery app: ``celery -A config worker`` (and ``celery -A config beat``).

Configuration comes from Django settings under the ``CELERY_`` namespace (see ``config.settings``).
Must not import ``arena`` at module level: tasks are found by autodiscovery.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
