"""Django admin: read-mostly views of the arena's rows; writes go through services (actions)."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages

from arena.models import Bot, BotVersion, Match, MatchSeat, Schedule, Tournament
from arena.services.matches import match_requeue
from engine import RulesError, rules_from_dict


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
    """Checks the rules the way ``schedule_create`` does."""

    class Meta:
        model = Schedule
        fields = "__all__"

    def clean_rules(self) -> dict:
        rules = self.cleaned_data["rules"]
        try:
            rules_from_dict(rules)
        except RulesError as error:
            raise forms.ValidationError(str(error)) from None
        return rules


@admin.register(Schedule)
class ScheduleAdmin(admin.ModelAdmin):
    form = ScheduleForm
    list_display = ("id", "name", "every_hours", "pairs", "enabled", "next_run_at", "last_run_at")
