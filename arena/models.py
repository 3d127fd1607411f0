"""The arena's rows: bots and their immutable versions, package blobs, round-robins, matches and
their seats and replays, and repeating schedules.

Rows are written only by ``arena.services``; read through ``arena.selectors``. Status fields are
state machines (``TextChoices``) whose transitions are services. Must not import ``arena.services``,
``arena.selectors``, the API or the tasks.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

#: Largest package blob, in bytes (the sandbox's own cap on an upload is below it).
MAX_BLOB_BYTES = 8 * 1024 * 1024


class PackageBlob(models.Model):
    """An uploaded package's bytes, keyed by their sha256: stored once, read by workers anywhere.

    Invariant: ``sha256`` is the hash of ``data``; ``size == len(data) <= MAX_BLOB_BYTES``.
    """

    sha256 = models.CharField(max_length=64, primary_key=True)
    size = models.PositiveIntegerField()
    data = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(size__lte=MAX_BLOB_BYTES), name="blob_size_capped"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.sha256[:12]} ({self.size} bytes)"


class Bot(models.Model):
    """A named bot of one owner; its code lives in versions. ``builtin`` names a built-in bot of the
    engine (owned by the system user), empty for uploaded bots."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="bots"
    )
    name = models.CharField(max_length=64)
    builtin = models.CharField(max_length=32, blank=True, default="")
    retired = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="bot_name_unique_per_owner"),
        ]

    def __str__(self) -> str:
        return f"{self.owner.username}/{self.name}"

    @property
    def label(self) -> str:
        return f"{self.owner.username}/{self.name}"


class VersionStatus(models.TextChoices):
    """pending → validating → ready | failed."""

    PENDING = "pending"
    VALIDATING = "validating"
    READY = "ready"
    FAILED = "failed"


class BotVersion(models.Model):
    """One immutable version of a bot: the package (by hash) or a built-in's name, never both.

    Invariant (checked by the database): an uploaded version has a blob and no ``builtin``; a
    built-in version has ``builtin`` and no blob. Only built-in versions run unconfined.
    """

    bot = models.ForeignKey(Bot, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    blob = models.ForeignKey(
        PackageBlob, on_delete=models.PROTECT, null=True, blank=True, related_name="versions"
    )
    builtin = models.CharField(max_length=32, blank=True, default="")
    filename = models.CharField(max_length=255, blank=True, default="")
    runtime = models.CharField(max_length=16, blank=True, default="")
    status = models.CharField(
        max_length=12, choices=VersionStatus.choices, default=VersionStatus.PENDING
    )
    fault_kind = models.CharField(max_length=16, blank=True, default="")
    fault_detail = models.TextField(blank=True, default="")
    validation_log = models.TextField(blank=True, default="")
    validation_match = models.ForeignKey(
        "Match", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    validated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["bot", "number"], name="version_number_unique"),
            models.CheckConstraint(
                condition=(Q(builtin="") & Q(blob__isnull=False))
                | (~Q(builtin="") & Q(blob__isnull=True)),
                name="version_is_blob_xor_builtin",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bot.label} v{self.number}"

    @property
    def label(self) -> str:
        return f"{self.bot.label} v{self.number}"


class TournamentStatus(models.TextChoices):
    """running → finished (→ running again if a failed match is re-queued); running → cancelled
    (its queued matches fail; the ones already running are recorded)."""

    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class Tournament(models.Model):
    """A round-robin: every pair of its pinned versions plays ``pairs`` duplicate pairs.

    ``rules`` is the full rule set (protocol ``rules`` object); ``rules_key`` names its rating
    board: the preset, plus the changed options when there are any.
    """

    name = models.CharField(max_length=120)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="tournaments"
    )
    preset = models.CharField(max_length=32)
    rules = models.JSONField()
    rules_key = models.CharField(max_length=255)
    pairs = models.PositiveIntegerField()
    seed = models.BigIntegerField()
    status = models.CharField(
        max_length=12, choices=TournamentStatus.choices, default=TournamentStatus.RUNNING
    )
    versions = models.ManyToManyField(BotVersion, through="Entry", related_name="tournaments")
    schedule = models.ForeignKey(
        "Schedule", on_delete=models.SET_NULL, null=True, blank=True, related_name="tournaments"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return self.name


class Entry(models.Model):
    """A version pinned into a tournament when it was scheduled."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entries")
    version = models.ForeignKey(BotVersion, on_delete=models.PROTECT, related_name="entries")

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "version"], name="entry_unique"),
        ]


class MatchKind(models.TextChoices):
    TOURNAMENT = "tournament"
    VALIDATION = "validation"


class MatchStatus(models.TextChoices):
    """queued → running → finished | failed; running → running (played again after a lost
    worker); failed → queued (re-queued by an operator)."""

    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"


class Match(models.Model):
    """One match: four seats (``MatchSeat`` rows), a seed, a rule set; its result once finished.

    ``winner`` is the winning team (0: seats 0 and 2, 1: seats 1 and 3), null for a draw.
    ``failure`` says why the platform could not play it (status ``failed``); a bot's fault is a
    result, not a failure.
    """

    kind = models.CharField(max_length=12, choices=MatchKind.choices)
    tournament = models.ForeignKey(
        Tournament, on_delete=models.CASCADE, null=True, blank=True, related_name="matches"
    )
    pair = models.PositiveIntegerField(default=0)
    swapped = models.BooleanField(default=False)
    seed = models.BigIntegerField()
    rules = models.JSONField()
    rules_key = models.CharField(max_length=255)
    status = models.CharField(
        max_length=12, choices=MatchStatus.choices, default=MatchStatus.QUEUED, db_index=True
    )
    attempts = models.PositiveIntegerField(default=0)
    winner = models.SmallIntegerField(null=True, blank=True)
    score = models.JSONField(null=True, blank=True)
    reason = models.CharField(max_length=32, blank=True, default="")
    failure = models.TextField(blank=True, default="")
    play_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    #: When its task was last sent, or is due (a platform retry's, later): a match queued since
    #: well before now while no match task waits in the broker has lost its task.
    queued_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["tournament", "status"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind="validation") | Q(tournament__isnull=False),
                name="tournament_match_has_tournament",
            ),
        ]

    def __str__(self) -> str:
        return f"match {self.pk}"

    @property
    def protocol_id(self) -> str:
        """The match's id as bots (``hello``) and replays (``match_id``) see it: a string,
        ``m-<pk>``. Everywhere else in the platform a match id is the integer ``pk``."""
        return f"m-{self.pk}"


class MatchSeat(models.Model):
    """Who sat where. ``fault_*`` is set on the seat whose fault ended the match; ``log`` keeps
    that bot's stderr tail for its owner only."""

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="seats")
    seat = models.PositiveSmallIntegerField()
    version = models.ForeignKey(BotVersion, on_delete=models.PROTECT, related_name="seats")
    fault_kind = models.CharField(max_length=16, blank=True, default="")
    fault_detail = models.TextField(blank=True, default="")
    log = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["match_id", "seat"]
        constraints = [
            models.UniqueConstraint(fields=["match", "seat"], name="seat_unique"),
            models.CheckConstraint(condition=Q(seat__lte=3), name="seat_0_to_3"),
        ]

    @property
    def team(self) -> int:
        return self.seat % 2


class Replay(models.Model):
    """A finished match's replay (format 1), zlib-compressed JSON."""

    match = models.OneToOneField(Match, on_delete=models.CASCADE, primary_key=True)
    data = models.BinaryField()
    size = models.PositiveIntegerField()


class Schedule(models.Model):
    """A round-robin that repeats: every ``every_hours`` over the latest ready version of every
    active bot (or every ready version when ``latest_only`` is off), with these rules."""

    name = models.CharField(max_length=120, unique=True)
    rules = models.JSONField()
    pairs = models.PositiveIntegerField(default=2)
    every_hours = models.PositiveIntegerField(default=24)
    latest_only = models.BooleanField(default=True)
    max_versions = models.PositiveIntegerField(default=32)
    enabled = models.BooleanField(default=True)
    next_run_at = models.DateTimeField()
    last_run_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name


class RefitState(models.TextChoices):
    """A board's refit: idle → queued (a result asked for one) → running → idle; running → again
    (results arrived meanwhile) → queued when the running refit ends. So at most one refit runs
    per board, and a burst of results during a refit triggers exactly one more. Each → queued
    takes the board's next ``ticket``, which its task carries: a task runs only its own ticket."""

    IDLE = "idle"
    QUEUED = "queued"
    RUNNING = "running"
    AGAIN = "again"


class RatingBoard(models.Model):
    """A rating board: one rule set, keyed by ``Match.rules_key`` (the preset, or the preset plus
    its changed options sorted by name, e.g. ``quatre-sept{target=41}``): a rule set is one game,
    so matches with changed options are rated on a board of their own. ``generation`` counts the
    refits; the ``Rating`` rows of the latest generation are the board."""

    key = models.CharField(max_length=255, unique=True)
    preset = models.CharField(max_length=32)
    state = models.CharField(max_length=8, choices=RefitState.choices, default=RefitState.IDLE)
    state_changed_at = models.DateTimeField()
    ticket = models.PositiveBigIntegerField(
        default=0, help_text="counts the refits queued: a refit task runs only its own ticket"
    )
    generation = models.PositiveIntegerField(default=0)
    fitted_at = models.DateTimeField(null=True, blank=True)
    matches = models.PositiveIntegerField(default=0, help_text="rated matches at the last refit")

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.key


class Rating(models.Model):
    """A version's rating on a board at one refit: immutable, appended by each refit, so a
    version's rows by generation are its history. ``ci95`` is the 95% interval's half-width (Elo);
    ``los_next`` the likelihood of superiority over the version ranked next (null on the last row
    or when that version is not connected to this one)."""

    board = models.ForeignKey(RatingBoard, on_delete=models.CASCADE, related_name="ratings")
    version = models.ForeignKey(BotVersion, on_delete=models.PROTECT, related_name="ratings")
    generation = models.PositiveIntegerField()
    fitted_at = models.DateTimeField()
    rank = models.PositiveIntegerField()
    elo = models.FloatField()
    ci95 = models.FloatField()
    matches = models.PositiveIntegerField()
    wins = models.PositiveIntegerField()
    losses = models.PositiveIntegerField()
    draws = models.PositiveIntegerField()
    provisional = models.BooleanField()
    los_next = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["board_id", "generation", "rank"]
        indexes = [models.Index(fields=["version", "board", "generation"])]
        constraints = [
            models.UniqueConstraint(
                fields=["board", "generation", "version"], name="rating_once_per_refit"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.version_id} on {self.board_id}#{self.generation}: {self.elo:.0f}"


class Ladder(models.Model):
    """A continuous ladder on one rating board: the latest ready version of every active bot
    plays duplicate pairs, chosen by ``arena.services.ladder`` for what they teach the ratings.

    Its matches are tournament matches of ``tournament`` (one that never ends: rated like any
    other), numbered by ``LadderPairing.pair``; ``next_pair`` is the next free number. An
    operator pauses it (``paused``) or caps its matches per hour (``max_per_hour``, 0: no cap);
    ``queue_depth`` (0: ``ARENA_LADDER_DEPTH``) is how many queued matches it tops the queue up to.
    """

    rules = models.JSONField()
    rules_key = models.CharField(max_length=255, unique=True)
    preset = models.CharField(max_length=32)
    tournament = models.OneToOneField(
        Tournament, on_delete=models.PROTECT, related_name="ladder"
    )
    paused = models.BooleanField(default=False)
    max_per_hour = models.PositiveIntegerField(default=0)
    queue_depth = models.PositiveIntegerField(default=0)
    next_pair = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    ticked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"ladder {self.rules_key}"


class LadderPairing(models.Model):
    """One duplicate pair the ladder scheduled: its two matches are the ladder tournament's
    matches with ``pair`` (A on seats 0 and 2 in the first, B there in the second). Created in
    the same transaction as its matches, keyed by (ladder, pair): never lost, never doubled."""

    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="pairings")
    pair = models.PositiveIntegerField()
    version_a = models.ForeignKey(BotVersion, on_delete=models.PROTECT, related_name="+")
    version_b = models.ForeignKey(BotVersion, on_delete=models.PROTECT, related_name="+")
    reason = models.CharField(max_length=16)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["ladder", "created_at"])]
        constraints = [
            models.UniqueConstraint(fields=["ladder", "pair"], name="ladder_pair_unique"),
        ]


class LadderBench(models.Model):
    """A version the ladder stopped scheduling, and why (it faulted in most of its matches). Its
    owner's next upload is a new version, which plays again."""

    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="benched")
    version = models.ForeignKey(BotVersion, on_delete=models.CASCADE, related_name="benched")
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["ladder", "version"], name="ladder_bench_once"),
        ]
