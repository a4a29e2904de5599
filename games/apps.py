from django.apps import AppConfig


class GamesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "games"

    def ready(self) -> None:
        from games import signals  # noqa: F401 - connects the receivers
        from games.views import inbound  # noqa: F401 - listens for anymail's inbound mail
