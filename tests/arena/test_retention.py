"""Retention: old replays and stderr tails go, results stay; the replay's API and page say it went;
a worker host's bot cache loses only folders no match has used for days."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
import zlib
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from arena.models import Match, MatchKind, MatchSeat, MatchStatus, Replay
from arena.runtime.cache import LOCK_NAME, STARTED_NAME, cached_install, prune_idle
from arena.services.bots import builtin_bots_ensure
from arena.services.retention import retention_prune
from arena.tasks import prune_old_data
from tests.arena.conftest import install_cached

DAY = 86400
REPLAY = zlib.compress(b'{"format":"quatresept-replay/1","deals":[]}')


def match_finished(days_ago: float, *, status: str = MatchStatus.FINISHED, log: str = "tail",
                   replay: bool = True) -> Match:
    """A validation match that finished ``days_ago`` days ago, with a replay and stderr tails."""
    version = builtin_bots_ensure()["random"]
    finished = timezone.now() - timedelta(days=days_ago) if days_ago is not None else None
    match = Match.objects.create(
        kind=MatchKind.VALIDATION, seed=1, rules={"preset": "quatre-sept"},
        rules_key="quatre-sept", status=status, winner=0, score=[21, 3], finished_at=finished,
    )
    for seat in range(4):
        MatchSeat.objects.create(match=match, seat=seat, version=version, log=log)
    if replay:
        Replay.objects.create(match=match, data=REPLAY, size=100)
    return match


def has_replay(match: Match) -> bool:
    return Replay.objects.filter(match=match).exists()


def logs(match: Match) -> set[str]:
    return set(match.seats.values_list("log", flat=True))


@pytest.mark.django_db
def test_old_replays_go_and_young_ones_and_results_stay():
    old, young = match_finished(40), match_finished(10)
    pruned = retention_prune(replay_days=30, log_days=0)
    assert (pruned.replays, pruned.replay_bytes) == (1, len(REPLAY))
    assert not has_replay(old) and has_replay(young)
    old.refresh_from_db()
    assert (old.status, old.winner, old.score) == (MatchStatus.FINISHED, 0, [21, 3])
    assert logs(old) == {"tail"}  # logs kept for ever (0 days)


@pytest.mark.django_db
def test_old_stderr_tails_are_cleared_and_young_ones_kept():
    old, young = match_finished(8), match_finished(2)
    pruned = retention_prune(replay_days=0, log_days=7)
    assert (pruned.logs, pruned.log_chars) == (4, 16)
    assert logs(old) == {""} and logs(young) == {"tail"}
    assert has_replay(old)  # replays kept for ever (0 days)


@pytest.mark.django_db
def test_a_match_not_done_loses_nothing_whatever_its_age():
    running = match_finished(None, status=MatchStatus.RUNNING, replay=False)
    Match.objects.filter(pk=running.pk).update(created_at=timezone.now() - timedelta(days=99))
    failed = match_finished(50, status=MatchStatus.FAILED, replay=False)
    retention_prune(replay_days=1, log_days=1)
    assert logs(running) == {"tail"}
    assert logs(failed) == {""}


@pytest.mark.django_db
def test_a_dry_run_counts_and_deletes_nothing():
    old = match_finished(40)
    pruned = retention_prune(replay_days=30, log_days=30, dry_run=True)
    assert (pruned.replays, pruned.logs) == (1, 4)
    assert has_replay(old) and logs(old) == {"tail"}


@pytest.mark.django_db
def test_pruning_goes_in_batches_until_nothing_is_left(monkeypatch):
    monkeypatch.setattr("arena.services.retention.BATCH", 2)
    old = [match_finished(40) for _ in range(5)]
    assert retention_prune(replay_days=30, log_days=30).replays == 5
    assert not Replay.objects.filter(match__in=old).exists()
    assert not MatchSeat.objects.filter(match__in=old).exclude(log="").exists()


@pytest.mark.django_db
def test_the_beat_task_prunes_by_the_settings(settings):
    settings.ARENA_KEEP_REPLAYS_DAYS, settings.ARENA_KEEP_LOGS_DAYS = 30, 0
    old = match_finished(31)
    assert prune_old_data()["replays"] == 1
    assert not has_replay(old) and logs(old) == {"tail"}


@pytest.mark.django_db
def test_the_api_says_a_deleted_replay_is_gone_not_missing(client, settings):
    settings.ARENA_KEEP_REPLAYS_DAYS = 30
    old, young = match_finished(40), match_finished(1)
    queued = match_finished(None, status=MatchStatus.QUEUED, replay=False)
    assert client.get(f"/api/matches/{old.pk}/replay/").status_code == 200
    retention_prune(replay_days=30, log_days=0)
    gone = client.get(f"/api/matches/{old.pk}/replay/")
    assert gone.status_code == 410
    assert "keeps replays 30 days" in gone.json()["detail"]
    assert client.get(f"/api/matches/{young.pk}/replay/").status_code == 200
    assert client.get(f"/api/matches/{queued.pk}/replay/").status_code == 404
    assert client.get(f"/api/matches/{old.pk}/").json()["status"] == "finished"


@pytest.mark.django_db
def test_the_match_page_says_the_replay_was_deleted(client, settings):
    settings.ARENA_KEEP_REPLAYS_DAYS = 30
    old = match_finished(40)
    retention_prune(replay_days=30, log_days=0)
    page = client.get(f"/matches/{old.pk}/").content.decode()
    assert 'id="replay-deleted"' in page and "keeps replays 30 days" in page


@pytest.mark.django_db
def test_the_command_reports_and_overrides_the_settings(settings, tmp_path):
    settings.ARENA_KEEP_REPLAYS_DAYS, settings.ARENA_BOT_CACHE = 0, tmp_path / "bots"
    pruned_before(tmp_path / "bots")
    old = match_finished(40)
    out = StringIO()
    call_command("prune", "--replays-days", "30", "--dry-run", stdout=out)
    assert "replays: would delete 1" in out.getvalue() and has_replay(old)
    assert "stderr tails: kept for ever" in out.getvalue()
    out = StringIO()
    call_command("prune", "--replays-days", "30", "--logs-days", "30", stdout=out)
    assert "replays: deleted 1" in out.getvalue() and not has_replay(old)
    assert "stderr tails: deleted 4" in out.getvalue() and logs(old) == {""}
    assert "removed 0 folders" in out.getvalue()


@pytest.mark.django_db
def test_the_command_refuses_negative_days():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="0 \\(keep for ever\\) or more"):
        call_command("prune", "--replays-days", "-1")


# --- the bot cache ---------------------------------------------------------------------------


def aged(folder: Path, days: float) -> None:
    then = time.time() - days * DAY
    os.utime(folder, (then, then))


def pruned_before(cache: Path) -> Path:
    """``cache`` as after its first prune (which touches every folder and removes none)."""
    cache.mkdir(parents=True, exist_ok=True)
    (cache / STARTED_NAME).touch()
    return cache


def test_the_first_prune_of_a_cache_only_starts_the_clock(tmp_path):
    """Before this version no use touched a folder, so its age is its install's: the first prune
    counts every folder as used now, and removes it only once it is idle from then on."""
    bot = install_cached(tmp_path, b"print('old')\n")
    aged(bot.folder, 100)
    first = prune_idle(tmp_path / "cache", idle_days=14)
    assert first.started and first.folders == 0 and bot.folder.is_dir()
    assert time.time() - bot.folder.stat().st_mtime < 60
    assert prune_idle(tmp_path / "cache", idle_days=14, now=time.time() + 15 * DAY).folders == 1


def test_a_bot_folder_unused_for_days_leaves_and_comes_back_when_it_plays(tmp_path):
    pruned_before(tmp_path / "cache")
    idle = install_cached(tmp_path, b"print('idle')\n")
    used = install_cached(tmp_path, b"print('used')\n")
    aged(idle.folder, 15)
    aged(used.folder, 2)
    pruned = prune_idle(tmp_path / "cache", idle_days=14)
    assert pruned.folders == 1 and pruned.bytes == len(b"print('idle')\n")
    assert not idle.folder.exists() and used.folder.is_dir()
    again = install_cached(tmp_path, b"print('idle')\n")  # the process knew it: it looks again
    assert again.folder == idle.folder
    assert (again.folder / "main.py").read_bytes() == b"print('idle')\n"


def test_every_use_counts_as_recent(tmp_path):
    pruned_before(tmp_path / "cache")
    bot = install_cached(tmp_path, b"print('x')\n")
    aged(bot.folder, 30)
    install_cached(tmp_path, b"print('x')\n")  # found in this process's memory: still touched
    assert prune_idle(tmp_path / "cache", idle_days=14).folders == 0
    assert bot.folder.is_dir()


def test_only_bot_folders_and_old_leftovers_are_removed(tmp_path):
    cache = pruned_before(tmp_path / "cache")
    keep = [cache / ".docker-seats", cache / "not-a-bot", cache / f".{'a' * 64}.partial-7"]
    old_partial = cache / f".{'b' * 64}.zip.partial-9"
    for folder in [*keep, old_partial]:
        folder.mkdir()
        (folder / "f").write_bytes(b"12345")
    for folder in keep[:2]:
        aged(folder, 100)
    aged(old_partial, 2)
    assert prune_idle(cache, idle_days=14).folders == 1
    assert all(folder.is_dir() for folder in keep) and not old_partial.exists()


def test_a_prune_waits_for_no_one_and_never_removes_under_another_prune(tmp_path):
    pruned_before(tmp_path / "cache")
    bot = install_cached(tmp_path, b"print('y')\n")
    aged(bot.folder, 30)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR);"
         "fcntl.flock(fd, fcntl.LOCK_SH); print('held', flush=True); time.sleep(30)",
         str(tmp_path / "cache" / LOCK_NAME)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        assert prune_idle(tmp_path / "cache", idle_days=14).folders == 0  # in use: skipped
        assert bot.folder.is_dir()
    finally:
        holder.kill()
        holder.wait()
    assert prune_idle(tmp_path / "cache", idle_days=14).folders == 1


def test_a_use_waits_while_a_prune_moves_folders_aside(tmp_path):
    """While a prune holds the exclusive lock, ``cached_install`` blocks (it never finds a
    folder the prune is moving); it goes on once the prune lets go."""
    source = b"print('z')\n"
    bot = install_cached(tmp_path, source)
    fd = os.open(tmp_path / "cache" / LOCK_NAME, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    child = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, hashlib; from pathlib import Path;"
         "from arena.runtime.cache import cached_install;"
         "src = sys.argv[2].encode(); "
         "b = cached_install(Path(sys.argv[1]), hashlib.sha256(src).hexdigest(), 'bot.py',"
         " lambda: src); print(b.folder)",
         str(tmp_path / "cache"), source.decode()],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(timeout=1)
    finally:
        os.close(fd)  # lets go
    out, _ = child.communicate(timeout=30)
    assert out.strip() == str(bot.folder)


def test_a_prune_keeps_a_folder_at_least_a_day(tmp_path):
    with pytest.raises(ValueError, match="at least a day"):
        prune_idle(tmp_path, idle_days=0.5)


def test_cached_install_touches_the_folder(tmp_path):
    source = b"print('t')\n"
    import hashlib

    digest = hashlib.sha256(source).hexdigest()
    bot = cached_install(tmp_path, digest, "bot.py", lambda: source)
    aged(bot.folder, 5)
    cached_install(tmp_path, digest, "bot.py", lambda: source)
    assert time.time() - bot.folder.stat().st_mtime < 60


@pytest.mark.django_db
def test_a_worker_prunes_its_cache_as_it_plays(alice, upload, settings, monkeypatch):
    from arena.models import BotVersion
    from arena.services.play import version_spec

    settings.ARENA_KEEP_BOT_CACHE_DAYS = 14
    version = BotVersion.objects.get(pk=upload(alice, "p").json()["latest_version"]["id"])
    stale = pruned_before(settings.ARENA_BOT_CACHE) / ("c" * 64 + ".py")
    stale.mkdir()
    aged(stale, 20)
    monkeypatch.setattr("arena.runtime.cache._last_prune", {})
    version_spec(version=version)  # prunes in the background: the match does not wait for it
    deadline = time.monotonic() + 30
    while stale.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not stale.exists()
    stale.mkdir()
    aged(stale, 20)
    version_spec(version=version)  # within the hour: not again
    time.sleep(0.5)
    assert stale.is_dir()


PRUNER = """
import sys, time
from pathlib import Path
from arena.runtime.cache import prune_idle
start = float(sys.argv[2])
while time.time() < start:
    time.sleep(0.001)
total = 0
for _ in range(20):
    total += prune_idle(Path(sys.argv[1]), idle_days=14).folders
print(total)
"""


def test_prunes_running_at_once_never_fail_and_remove_each_folder_once(tmp_path):
    """Several worker processes prune the same cache together: none raises (a prune's error
    would fail the match that started it), and each idle folder is removed and counted once."""
    cache = pruned_before(tmp_path / "cache")
    for i in range(60):
        folder = cache / f"{i:064x}.zip"
        (folder / "sub").mkdir(parents=True)
        for j in range(20):
            (folder / "sub" / f"f{j}").write_bytes(b"x" * 100)
        aged(folder, 30)
    start = str(time.time() + 1.0)
    procs = [subprocess.Popen([sys.executable, "-c", PRUNER, str(cache), start],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [err for _, err in outs]
    assert sum(int(out) for out, _ in outs) == 60
    assert sorted(e.name for e in cache.iterdir()) == sorted([STARTED_NAME, LOCK_NAME])


def test_a_worker_of_another_user_can_share_a_cache_an_operator_pruned(tmp_path, monkeypatch):
    """An operator's ``manage.py prune`` (say as root, umask 077) makes the lock file: it is
    readable by every user and a worker opens it read-only, so a worker running as another user
    can take the shared lock; a folder that user may not touch is used as it is."""
    source = b"print('shared')\n"
    bot = install_cached(tmp_path, source)
    (tmp_path / "cache" / LOCK_NAME).unlink()
    old = os.umask(0o077)
    try:
        prune_idle(tmp_path / "cache", idle_days=14)
    finally:
        os.umask(old)
    assert (tmp_path / "cache" / LOCK_NAME).stat().st_mode & 0o777 == 0o644
    opened = []
    real_open = os.open

    def recording_open(path, flags, *args):
        opened.append((Path(path).name, flags & (os.O_WRONLY | os.O_RDWR)))
        return real_open(path, flags, *args)

    def refused(*args, **kwargs):
        raise PermissionError("not this user's folder")

    monkeypatch.setattr(os, "open", recording_open)
    monkeypatch.setattr(os, "utime", refused)
    again = install_cached(tmp_path, source)
    assert again.folder == bot.folder
    assert (LOCK_NAME, 0) in opened and all(flags == 0 for name, flags in opened
                                            if name == LOCK_NAME)
