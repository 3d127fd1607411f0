"""Page forms: they check what a person typed; services decide and write (an ``ArenaError`` from a
service becomes a form error on the field it names)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.validators import ASCIIUsernameValidator

from arena.errors import ArenaError
from arena.models import BotVersion
from arena.rulesets import MAX_TARGET
from engine.rules import (
    CLAIM_VALUES,
    DECK_VALUES,
    LOW_LEAD_VALUES,
    OPTION_NAMES,
    OPTIONS,
    POLITAINE_VALUES,
    PRESETS,
)
from sandbox.package import MAX_PACKAGE_BYTES

UPLOAD_HELP = (
    f"A .py or .js file, or a .zip with a bot.json manifest (at most "
    f"{MAX_PACKAGE_BYTES // (1024 * 1024)} MiB). It is validated against the built-in random bot."
)


class SignupForm(UserCreationForm):
    """Username and password twice; the service creates the account. A new username is ASCII
    (letters, digits, @ . + - _): a name of look-alike letters from another script (``аrena``
    with a Cyrillic а) would pass for another user's, the system's built-in bots included."""

    class Meta(UserCreationForm.Meta):
        fields = ("username",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["username"].validators.append(ASCIIUsernameValidator())
        self.fields["username"].help_text = (
            "Up to 150 characters: ASCII letters, digits and @ . + - _ only.")


class BotUploadForm(forms.Form):
    name = forms.CharField(
        max_length=64,
        help_text="Letters, digits, '_', '.' or '-', starting with a letter or digit.",
    )
    file = forms.FileField(label="Bot file", help_text=UPLOAD_HELP)


class VersionUploadForm(forms.Form):
    file = forms.FileField(label="New version", help_text=UPLOAD_HELP)


_DEFAULT = ("", "preset default")
_BOOL = [_DEFAULT, ("true", "on"), ("false", "off")]
_CHOICES = {
    "politaine": POLITAINE_VALUES,
    "low_lead": LOW_LEAD_VALUES,
    "claim_out": CLAIM_VALUES,
    "deck": DECK_VALUES,
}
#: Each option's one description, from the engine (docs/rules.md carries the same table).
OPTION_HELP = {option.name: option.meaning for option in OPTIONS}


#: The largest id a row can have (a signed 64-bit primary key).
MAX_ID = 2**63 - 1


class VersionChoiceField(forms.ModelMultipleChoiceField):
    """Versions by id; an id that is not an integer from 1 to ``MAX_ID`` is refused before any
    query (a huge one would overflow SQLite's integer: a 500)."""

    def label_from_instance(self, obj: BotVersion) -> str:
        return obj.label

    def _check_values(self, value):
        for pk in value:
            text = str(pk)
            if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= MAX_ID:
                raise forms.ValidationError(
                    self.error_messages["invalid_pk_value"], code="invalid_pk_value",
                    params={"pk": text[:40]},
                )
        return super()._check_values(value)


class TournamentForm(forms.Form):
    """A round-robin: name, versions, a preset and any options changed, duplicate pairs."""

    name = forms.CharField(max_length=120)
    versions = VersionChoiceField(
        queryset=BotVersion.objects.none(), widget=forms.CheckboxSelectMultiple,
        help_text="Ready versions of active bots; pick at least two.",
    )
    preset = forms.ChoiceField(choices=[(name, name) for name in PRESETS], initial="quatre-sept")
    pairs = forms.IntegerField(
        min_value=1, max_value=100, initial=2,
        help_text="Duplicate pairs per pairing: each pair is two matches on the same deals with "
                  "the seats swapped.",
    )
    target = forms.IntegerField(min_value=1, max_value=MAX_TARGET, required=False,
                                help_text=OPTION_HELP["target"])

    def __init__(self, *args: Any, versions: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["versions"].queryset = versions
        for name in OPTION_NAMES:
            if name == "target":
                continue
            values = _CHOICES.get(name)
            choices = [_DEFAULT, *((v, v) for v in values)] if values else _BOOL
            self.fields[name] = forms.ChoiceField(
                choices=choices, required=False, label=name.replace("_", " "),
                help_text=OPTION_HELP[name],
            )

    def option_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in OPTION_NAMES]

    def options_have_errors(self) -> bool:
        """Whether an option (inside the collapsed Options panel) has an error: the panel opens."""
        return any(self.errors.get(name) for name in OPTION_NAMES)

    def rules(self) -> dict[str, Any]:
        """The ``rules`` object: the preset and the options set here (others stay the preset's)."""
        data = self.cleaned_data
        rules: dict[str, Any] = {"preset": data["preset"]}
        for name in OPTION_NAMES:
            value = data.get(name)
            if value in (None, ""):
                continue
            rules[name] = {"true": True, "false": False}.get(value, value)
        return rules

    def add_service_error(self, error: ArenaError) -> None:
        """Show a service's refusal on the field it is about."""
        field = {"rules": "preset"}.get(error.field or "", error.field)
        if field == "preset":  # an option's message names it first: show it on the option
            named = error.message.split(" ", 1)[0]
            field = named if named in OPTION_NAMES else field
        self.add_error(field if field in self.fields else None, error.message)
