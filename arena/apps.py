"""Django app config for the arena. After every ``migrate`` (and test-database flush) the built-in
bots are ensured, so a new built-in of the engine appears without a new migration. The tasks are
registered with the Celery app in every process (not only in workers, which autodiscover them):
services send them by name, and eager mode (``CELERY_EAGER``, the tests) runs a task in-process
only when its name is registered there."""

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _ensure_builtins(sender, **kwargs) -> None:
    from arena.services.bots import builtin_bots_ensure

    builtin_bots_ensure()


class ArenaConfig(AppConfig):
    name = "arena"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "Quatre Sept Arena"

    def ready(self) -> None:
        post_migrate.connect(_ensure_builtins, sender=self, dispatch_uid="arena-builtins")
        from arena import checks, tasks  # noqa: F401 (registers the checks and the tasks)
