"""Issue 27: the archive's search (its indexes among finished games, and the names' by
trigram, PostgreSQL's pg_trgm), and each person's calendar feed."""

import django.contrib.postgres.operations
import django.db.models.deletion
import games.models
from django.conf import settings
from django.db import migrations, models


NAME_INDEXES = {
    "user_name_trigram": ("auth_user", "username"),
    "profile_name_trigram": ("games_profile", "display_name"),
}


def name_indexes(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    for index, (table, column) in NAME_INDEXES.items():
        schema_editor.execute(
            f"CREATE INDEX {index} ON {table} USING gin (UPPER({column}::text) gin_trgm_ops)"
        )


def drop_name_indexes(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    for index in NAME_INDEXES:
        schema_editor.execute(f"DROP INDEX {index}")


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0018_people_and_ratings"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        django.contrib.postgres.operations.TrigramExtension(),
        # The names the search reads a part of (`icontains`: UPPER(col::text) LIKE ...), by
        # SQL: Django's OpClass within an expression index writes SQL PostgreSQL refuses.
        # PostgreSQL only: the embedded default (SQLite) has no trigram index.
        migrations.RunPython(name_indexes, drop_name_indexes),
        migrations.CreateModel(
            name="CalendarFeed",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "token",
                    models.CharField(
                        default=games.models.new_feed_token, max_length=64, unique=True
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now=True)),
            ],
        ),
        migrations.AddIndex(
            model_name="game",
            index=models.Index(
                condition=models.Q(("status", "finished")),
                fields=["finished_at", "id"],
                name="game_finished_date",
            ),
        ),
        migrations.AddIndex(
            model_name="game",
            index=models.Index(
                condition=models.Q(("status", "finished")),
                fields=["turn", "id"],
                name="game_finished_length",
            ),
        ),
        migrations.AddIndex(
            model_name="game",
            index=models.Index(
                condition=models.Q(("status", "finished")),
                fields=["player_count", "setup", "decisions", "finished_at", "id"],
                name="game_finished_kind",
            ),
        ),
        migrations.AddField(
            model_name="calendarfeed",
            name="user",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="calendar_feed",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
    ]
