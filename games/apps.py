from django.apps import AppConfig


class GamesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "games"

    def ready(self) -> None:
        # Importing connects the receivers: profiles for new users, the tasks that
        # follow what the core announces, and anymail's inbound mail.
        from games import signals, tasks  # noqa: F401
        from games.mail import receiver  # noqa: F401
        from games.translation_chain import install

        install()  # every sentence looked up without walking empty catalogues
