"""OutgoingEmail.summary holds a code and its values (JSON), worded when read, instead of
an English line (issue 22). A line stored before is kept as it was, a JSON string, which
the reader shows as it is (games.mail.compose.summary_line): no data is lost. Backwards,
every summary becomes its line again (a code is worded as it reads now)."""

from typing import Any

from django.db import migrations, models


def lines_to_json(apps: Any, schema_editor: Any) -> None:
    OutgoingEmail = apps.get_model("games", "OutgoingEmail")
    for email in OutgoingEmail.objects.exclude(summary="").only("pk", "summary").iterator():
        OutgoingEmail.objects.filter(pk=email.pk).update(stored=email.summary)


def json_to_lines(apps: Any, schema_editor: Any) -> None:
    from games.mail.compose import summary_line  # the words as they read now

    OutgoingEmail = apps.get_model("games", "OutgoingEmail")
    for email in OutgoingEmail.objects.exclude(stored={}).only("pk", "stored").iterator():
        OutgoingEmail.objects.filter(pk=email.pk).update(summary=summary_line(email.stored))


class Migration(migrations.Migration):
    dependencies = [("games", "0011_repair")]

    operations = [
        migrations.AddField(
            model_name="outgoingemail",
            name="stored",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(lines_to_json, json_to_lines),
        migrations.RemoveField(model_name="outgoingemail", name="summary"),
        migrations.RenameField(model_name="outgoingemail", old_name="stored", new_name="summary"),
    ]
