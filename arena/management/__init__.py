"""Management commands: ``play`` (no database), ``seed_demo``, ``requeue_failed``."""
