"""Django admin: read-mostly views of the arena's rows; writes go through services (actions)."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages

from arena.errors import ArenaError
from arena.models import (
    Bot,
    BotVersion,
    Ladder,
    LadderBench,
    Match,
    MatchSeat,
    Schedule,
    Tournament,
)
from arena.services.ladder import ladder_configure, ladder_create
from arena.services.matches import match_requeue
from arena.services.schedules import schedule_check


@admin.register(Bot)
class BotAdmin(admin.ModelAdmin):
    list_display = ("id", "owner", "name", "builtin", "retired", "created_at")
    list_filter = ("retired",)
    search_fields = ("name", "owner__username")


@admin.register(BotVersion)
class BotVersionAdmin(admin.ModelAdmin):
    list_display = ("id", "bot", "number", "status", "runtime", "fault_kind", "created_at")
    list_filter = ("status",)
    readonly_fields = [f.name for f in BotVersion._meta.fields]


class MatchSeatInline(admin.TabularInline):
    model = MatchSeat
    extra = 0
    readonly_fields = ("seat", "version", "fault_kind", "fault_detail")
    exclude = ("log",)


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "tournament", "status", "winner", "reason", "attempts", "failure")
    list_filter = ("status", "kind")
    inlines = [MatchSeatInline]
    actions = ["requeue"]
    readonly_fields = [f.name for f in Match._meta.fields]

    @admin.action(description="Re-queue failed matches")
    def requeue(self, request, queryset) -> None:
        done = sum(match_requeue(match_id=m.pk) for m in queryset)
        self.message_user(request, f"{done} match(es) re-queued", messages.SUCCESS)


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "rules_key", "pairs", "status", "created_at", "finished_at")
    list_filter = ("status",)


class ScheduleForm(forms.ModelForm):
    """Checks every setting the way ``schedule_create`` does (``schedule_check``): a schedule
    saved here runs."""

    class Meta:
        model = Schedule
        fields = "__all__"

    def clean(self) -> dict:
        data = super().clean()
        fields = ("name", "rules", "pairs", "every_hours", "max_versions")
        if all(field in data for field in fields):
            try:
                data["name"] = schedule_check(**{field: data[field] for field in fields})
            except ArenaError as error:
                self.add_error(error.field if error.field in fields else None, error.message)
        return data


@admin.register(Schedule)
class ScheduleAdmin(admin.ModelAdmin):
    form = ScheduleForm
    list_display = ("id", "name", "every_hours", "pairs", "enabled", "next_run_at", "last_run_at")

    def get_readonly_fields(self, request, obj=None) -> tuple[str, ...]:
        """``next_run_at`` is set when the schedule is added and moved on by its runs only: a
        change page opened before a run would otherwise write the older time back, and the
        schedule would run that slot again."""
        return ("last_run_at", "next_run_at") if obj is not None else ("last_run_at",)


@admin.register(Ladder)
class LadderAdmin(admin.ModelAdmin):
    """Ladders: add one for a board (its rules), pause or resume, cap matches per hour or set the
    queue depth; every write goes through ``arena.services.ladder``."""

    list_display = ("id", "rules_key", "paused", "max_per_hour", "queue_depth", "next_pair",
                    "ticked_at")
    list_editable = ("paused", "max_per_hour", "queue_depth")
    fields = ("rules", "paused", "max_per_hour", "queue_depth")
    actions = ["pause", "resume"]

    def get_readonly_fields(self, request, obj=None):
        return ("rules",) if obj is not None else ()

    def save_model(self, request, obj, form, change) -> None:
        if not change:
            try:
                created = ladder_create(rules=obj.rules)
            except ArenaError as error:
                self.message_user(request, str(error), messages.ERROR)
                return
            obj.pk = created.pk
        ladder_configure(
            ladder=obj, paused=obj.paused, max_per_hour=obj.max_per_hour,
            queue_depth=obj.queue_depth,
        )

    @admin.action(description="Pause the selected ladders")
    def pause(self, request, queryset) -> None:
        for ladder in queryset:
            ladder_configure(ladder=ladder, paused=True)

    @admin.action(description="Resume the selected ladders")
    def resume(self, request, queryset) -> None:
        for ladder in queryset:
            ladder_configure(ladder=ladder, paused=False)


@admin.register(LadderBench)
class LadderBenchAdmin(admin.ModelAdmin):
    """Benched versions: delete a row to let that version play on the ladder again."""

    list_display = ("id", "ladder", "version", "created_at", "reason")
    readonly_fields = ("ladder", "version", "reason", "created_at")
