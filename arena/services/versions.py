"""Transitions of a version's validation: pending → validating → ready | failed, and back to
pending when its validation match is re-queued. Each checks where it comes from; called inside the
transaction that changes the validation match."""

from __future__ import annotations

from django.utils import timezone

from arena.models import BotVersion, VersionStatus


def version_validation_begin(*, version: BotVersion) -> bool:
    """pending → validating (a worker took the validation match). False if not pending."""
    updated = BotVersion.objects.filter(pk=version.pk, status=VersionStatus.PENDING).update(
        status=VersionStatus.VALIDATING
    )
    return bool(updated)


def version_validation_end(
    *, version: BotVersion, fault_kind: str = "", fault_detail: str = "", log: str = ""
) -> bool:
    """pending | validating → ready (no fault) or failed (with the fault and the bot's stderr
    tail). False if the version was already decided."""
    status = VersionStatus.FAILED if (fault_kind or fault_detail) else VersionStatus.READY
    updated = BotVersion.objects.filter(
        pk=version.pk, status__in=[VersionStatus.PENDING, VersionStatus.VALIDATING]
    ).update(
        status=status,
        fault_kind=fault_kind,
        fault_detail=fault_detail,
        validation_log=log,
        validated_at=timezone.now(),
    )
    return bool(updated)


def version_validation_reset(*, version: BotVersion) -> bool:
    """failed → pending, when its validation match is re-queued. False if not failed."""
    updated = BotVersion.objects.filter(pk=version.pk, status=VersionStatus.FAILED).update(
        status=VersionStatus.PENDING, fault_kind="", fault_detail="", validation_log="",
        validated_at=None,
    )
    return bool(updated)
