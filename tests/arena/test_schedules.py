"""Repeating round-robins: a schedule that is saved can run, and a run never loops, never runs a
slot twice, and never leaves a new bot out for good."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from arena.admin import ScheduleForm
from arena.errors import ArenaError
from arena.models import Bot, BotVersion, Schedule, Tournament, VersionStatus
from arena.services.bots import builtin_bots_ensure
from arena.services.schedules import (
    MAX_NAME,
    schedule_create,
    schedule_versions,
    schedules_run_due,
)

pytestmark = pytest.mark.django_db

QUATRE_SEPT = {"preset": "quatre-sept"}


def form_data(**changes) -> dict:
    data = {
        "name": "nightly", "rules": '{"preset": "quatre-sept"}', "pairs": 1, "every_hours": 24,
        "latest_only": True, "max_versions": 8, "enabled": True,
        "next_run_at": timezone.now() - timedelta(minutes=1),
    }
    return {**data, **changes}


@pytest.mark.parametrize(("field", "value"), [
    ("every_hours", 0), ("pairs", 0), ("pairs", 101), ("max_versions", 1),
    ("name", "n" * (MAX_NAME + 1)), ("rules", '{"preset": "quatre-sept", "target": 1001}'),
])
def test_the_admin_refuses_a_schedule_that_could_not_run(field, value):
    form = ScheduleForm(data=form_data(**{field: value}))
    assert not form.is_valid()
    assert field in form.errors, form.errors
    with pytest.raises(ArenaError) as refused:
        schedule_create(**{
            "name": "nightly", "rules": QUATRE_SEPT, "pairs": 1, "every_hours": 24,
            "max_versions": 8,
            field: value if field != "rules" else {**QUATRE_SEPT, "target": 1001},
        })
    assert refused.value.field == field


def test_a_schedule_saved_in_the_admin_runs():
    builtin_bots_ensure()
    form = ScheduleForm(data=form_data(name="n" * MAX_NAME))
    assert form.is_valid(), form.errors
    schedule = form.save()
    created = schedules_run_due()
    assert [t.schedule_id for t in created] == [schedule.pk]
    assert created[0].name.startswith("n" * MAX_NAME + " ")


def test_a_run_always_moves_on_even_with_no_hours_between_runs():
    """A row written past the checks (``every_hours`` 0) moves on by an hour, where the run used
    to loop for ever inside its transaction, every schedule's lock held."""
    builtin_bots_ensure()
    now = timezone.now()
    schedule = Schedule.objects.create(
        name="broken", rules=QUATRE_SEPT, pairs=1, every_hours=0, next_run_at=now
    )
    assert len(schedules_run_due(now=now)) == 1
    schedule.refresh_from_db()
    assert schedule.next_run_at == now + timedelta(hours=1)


def test_the_change_page_cannot_write_back_an_older_next_run(client):
    builtin_bots_ensure()
    now = timezone.now()
    schedule = schedule_create(
        name="nightly", rules=QUATRE_SEPT, pairs=1, first_run_at=now - timedelta(minutes=1)
    )
    client.force_login(User.objects.create_superuser("root", password="root-password-1"))
    page = client.get(f"/admin/arena/schedule/{schedule.pk}/change/")
    assert page.status_code == 200
    stale = timezone.localtime(schedule.next_run_at)
    assert len(schedules_run_due(now=now)) == 1  # beat runs it while the page is open
    response = client.post(f"/admin/arena/schedule/{schedule.pk}/change/", {
        "name": "nightly", "rules": '{"preset": "quatre-sept"}', "pairs": "2",
        "every_hours": "24", "latest_only": "on", "max_versions": "8", "enabled": "on",
        "next_run_at_0": stale.strftime("%Y-%m-%d"), "next_run_at_1": stale.strftime("%H:%M:%S"),
    })
    assert response.status_code == 302, response.content.decode()[:3000]
    schedule.refresh_from_db()
    assert schedule.pairs == 2
    assert schedule.next_run_at > now  # not the older time posted by the page
    assert schedules_run_due(now=now + timedelta(minutes=1)) == []
    assert Tournament.objects.filter(schedule=schedule).count() == 1


def test_a_capped_schedule_takes_the_newest_bots(alice):
    builtin_bots_ensure()
    schedule = schedule_create(name="small", rules=QUATRE_SEPT, pairs=1, max_versions=2)
    system_first = {v.pk for v in schedule_versions(schedule=schedule)}
    newest = Bot.objects.create(owner=alice, name="newcomer")
    version = BotVersion.objects.create(
        bot=newest, number=1, status=VersionStatus.READY, builtin="random"
    )
    chosen = {v.pk for v in schedule_versions(schedule=schedule)}
    assert version.pk in chosen and len(chosen) == 2
    assert chosen != system_first
