"""``Match.queued_at``: when a match's task was last sent or is due; existing rows take their
creation time (what the lost-task sweep read before)."""

from django.db import migrations, models
from django.db.models import F
from django.utils import timezone


def from_created_at(apps, schema_editor):
    apps.get_model("arena", "Match").objects.update(queued_at=F("created_at"))


class Migration(migrations.Migration):
    dependencies = [("arena", "0005_refit_ticket")]

    operations = [
        migrations.AddField(
            model_name="match",
            name="queued_at",
            field=models.DateTimeField(default=timezone.now),
        ),
        migrations.RunPython(from_created_at, migrations.RunPython.noop, elidable=True),
    ]
