"""The engine's exceptions: both are ValueErrors whose message a player can read."""


class IllegalMove(ValueError):
    """A submission the rules do not allow; the state it was tried on is unchanged."""


class NotationError(ValueError):
    """Text that is not a move in the engine's notation; the message says what was expected."""
