"""The engine's exceptions: both are ValueErrors whose message a player can read."""

from engine.reasons import Reason


class IllegalMove(ValueError):
    """A submission the rules do not allow; the state it was tried on is unchanged. Its
    message is the reason's English sentence; `reason` keeps the code and values (what
    the site stores, `Reason.as_json`)."""

    def __init__(self, reason: Reason) -> None:
        super().__init__(reason)
        self.reason = reason


class NotationError(ValueError):
    """Text that is not a move in the engine's notation; the message says what was
    expected, in English; `reason` keeps the code and values, which the site words in its
    reader's language."""

    def __init__(self, reason: Reason) -> None:
        super().__init__(reason)
        self.reason = reason
