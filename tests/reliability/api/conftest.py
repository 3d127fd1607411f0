"""The arena's API fixtures (users, clients, eager tasks, uploads) for the fast reliability tests
of the API: bad uploads, ownership, the schema under fuzzing, production settings."""

from tests.arena.conftest import (  # noqa: F401 (fixtures)
    _eager_tasks_and_clean_cache,
    alice,
    bob,
    client_for,
    run_tasks,
    upload,
)
