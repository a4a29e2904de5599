"""Django's `makemessages`, which also extracts the engine's sentences: the engine marks
them with `engine.reasons.N_` (no Django there), and the site translates them when it
words a reason (games.show.words.reason_text)."""

from __future__ import annotations

from django.core.management.commands import makemessages


class Command(makemessages.Command):
    xgettext_options = [
        *makemessages.Command.xgettext_options,
        "--keyword=N_",
        "--flag=N_:1:python-brace-format",
    ]
