"""Services for bots and their versions: upload (blob, version, validation match), retire, and the
system-owned built-in bots. An upload is validated by ``sandbox``'s package rules before anything
is stored; a version never changes once created."""

from __future__ import annotations

import hashlib
import re
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Max

from arena.errors import ArenaError
from arena.models import (
    MAX_BLOB_BYTES,
    Bot,
    BotVersion,
    Match,
    MatchKind,
    MatchSeat,
    PackageBlob,
    VersionStatus,
)
from arena.rulesets import rules_key
from arena.services.queue import queue_matches
from engine import RuleSet, new_match, rules_for
from engine.bots import BUILTIN_BOTS
from sandbox import PackageError, inspect_package

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
#: The rule preset validation matches are played with, and the built-in opponent.
VALIDATION_PRESET = "quatre-sept"
VALIDATION_OPPONENT = "random"


def bot_create(*, owner: AbstractBaseUser, name: str, filename: str, data: bytes) -> Bot:
    """A new bot of ``owner`` with version 1 from the upload, queued for validation.

    Raises ``ArenaError`` (nothing stored) for a bad name, a taken name or a bad package.
    """
    name = (name or "").strip()
    if not NAME_RE.match(name):
        raise ArenaError(
            "a bot name is 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit",
            field="name",
        )
    if owner.get_username() == settings.ARENA_SYSTEM_USER:
        raise ArenaError("the system user owns only the built-in bots", field="name")
    _inspect(data, filename)
    try:
        with transaction.atomic():
            _refuse_taken(owner, name)
            bot = Bot.objects.create(owner=owner, name=name)
            _version_create(bot=bot, filename=filename, data=data)
    except IntegrityError:  # the same name uploaded twice at once: the other one won
        _refuse_taken(owner, name)
        raise
    return bot


def _refuse_taken(owner: AbstractBaseUser, name: str) -> None:
    """``ArenaError`` if ``owner`` already has a bot named ``name``."""
    taken = Bot.objects.filter(owner=owner, name=name).values_list("pk", "retired").first()
    if taken is not None:
        bot_id, retired = taken
        raise ArenaError(
            f"you already have a bot named {name!r} (id {bot_id}), retired: it takes no new "
            "versions, so choose another name"
            if retired else
            f"you already have a bot named {name!r} (id {bot_id}): upload a new version to it "
            f"instead (POST /api/bots/{bot_id}/versions/, or `python -m arena_cli upload "
            f"--bot {bot_id} PATH`) or choose another name",
            field="name",
        )


def bot_version_create(*, bot: Bot, filename: str, data: bytes) -> BotVersion:
    """The bot's next version from the upload, queued for validation. ``ArenaError`` if the bot is
    retired or built-in, or the package is bad; nothing is stored then."""
    _inspect(data, filename)
    with transaction.atomic():
        bot = Bot.objects.select_for_update().get(pk=bot.pk)
        if bot.builtin:
            raise ArenaError("built-in bots get no uploaded versions", field="file")
        if bot.retired:
            raise ArenaError("this bot is retired: it takes no new versions", field="file")
        return _version_create(bot=bot, filename=filename, data=data)


def bot_retire(*, bot: Bot) -> Bot:
    """Retire the bot: it enters no new round-robin; its results stay. Idempotent."""
    with transaction.atomic():
        bot = Bot.objects.select_for_update().get(pk=bot.pk)
        if not bot.retired:
            bot.retired = True
            bot.save(update_fields=["retired"])
    return bot


def blob_store(*, data: bytes) -> PackageBlob:
    """The blob holding ``data``, created if new (content-addressed: same bytes, same row)."""
    if len(data) > MAX_BLOB_BYTES:
        raise ArenaError(f"the package is over {MAX_BLOB_BYTES} bytes", field="file")
    digest = hashlib.sha256(data).hexdigest()
    blob, _ = PackageBlob.objects.get_or_create(
        sha256=digest, defaults={"size": len(data), "data": bytes(data)}
    )
    return blob


def builtin_bots_ensure() -> dict[str, BotVersion]:
    """The system user, one bot per built-in of the engine and its version 1 (ready), created if
    missing. Idempotent; returns the versions by built-in name."""
    user_model = get_user_model()
    with transaction.atomic():
        system, created = user_model.objects.get_or_create(
            username=settings.ARENA_SYSTEM_USER, defaults={"is_active": False}
        )
        if created:
            system.set_unusable_password()
            system.save()
        found: dict[str, BotVersion] = {}
        for name in sorted(BUILTIN_BOTS):
            bot, _ = Bot.objects.get_or_create(owner=system, name=name, defaults={"builtin": name})
            version = bot.versions.order_by("number").first()
            if version is None:
                version = BotVersion.objects.create(
                    bot=bot, number=1, builtin=name, runtime="python3",
                    status=VersionStatus.READY,
                )
            found[name] = version
    return found


def _inspect(data: bytes, filename: str) -> None:
    try:
        inspect_package(bytes(data), filename or "")
    except PackageError as error:
        raise ArenaError(str(error), field="file") from None


def _version_create(*, bot: Bot, filename: str, data: bytes) -> BotVersion:
    """Inside a transaction with ``bot`` locked: the version row and its validation match."""
    package = inspect_package(bytes(data), filename)
    blob = blob_store(data=data)
    number = (bot.versions.aggregate(n=Max("number"))["n"] or 0) + 1
    version = BotVersion.objects.create(
        bot=bot, number=number, blob=blob, filename=filename[-255:], runtime=package.runtime,
        status=VersionStatus.PENDING,
    )
    match = validation_match_create(version=version)
    version.validation_match = match
    version.save(update_fields=["validation_match"])
    return version


def validation_match_create(*, version: BotVersion) -> Match:
    """A queued validation match: ``version`` on seats 0 and 2, built-in random on 1 and 3."""
    opponent = builtin_bots_ensure()[VALIDATION_OPPONENT]
    rules = rules_for(VALIDATION_PRESET)
    match = Match.objects.create(
        kind=MatchKind.VALIDATION,
        seed=validation_seed(rules),
        rules=rules.to_dict(),
        rules_key=rules_key(rules),
    )
    MatchSeat.objects.bulk_create(
        MatchSeat(match=match, seat=seat, version=version if seat % 2 == 0 else opponent)
        for seat in range(4)
    )
    queue_matches(match_ids=[match.pk])
    return match


def validation_seed(rules: RuleSet) -> int:
    """A random seed whose first deal is played (no instant win at the deal), so that every seat
    of the validation match must decide: a version is validated by its own answers, never by
    what the deck dealt (``_end_validation`` in ``arena.services.matches`` checks it too)."""
    while True:
        seed = secrets.randbits(31)
        if not new_match(rules, seed).is_over:
            return seed
