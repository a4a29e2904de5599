"""Issue 26: the level of a game's computers. Every game made before played its
computers with the random player (games.services), so the games there are get "easy"
and keep playing as they have; a new game is "normal" (the greedy player) unless its
creator chooses otherwise."""

from django.db import migrations, models


def level(default: str) -> models.CharField:
    return models.CharField(
        choices=[("easy", "Easy"), ("normal", "Normal"), ("hard", "Hard")],
        default=default,
        max_length=10,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0016_table_votes"),
    ]

    operations = [
        migrations.AddField(model_name="game", name="computer_level", field=level("easy")),
        migrations.AlterField(model_name="game", name="computer_level", field=level("normal")),
    ]
