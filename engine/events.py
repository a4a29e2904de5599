"""Every kind of event the engine writes to a game's log, as TypedDicts.

An event is a plain JSON object (`{"kind": "wall", "player": "red", ...}`): the
site stores it as it is, and the scenario files compare with it. These types
only name the shapes; `engine.game` and `engine.rules` build the dicts in place
(a `log.append({...})` is checked against `Event` by mypy). Cells are `[x, y]`,
walls `[[x, y], [x, y]]`, as `engine.serialize` writes them.

`turn` is stamped on every event after it is made (`engine.game`), so it is
`NotRequired` while an event is being built. An event marked `to` a player is
theirs alone (`engine.view.visible_events`).

`ENGINE_EVENT_KINDS` is every `kind` the engine can write; tests/test_events.py
checks it against the `"kind": "..."` literals in the engine's source.
"""

from typing import Literal, NotRequired, TypedDict, get_args, get_type_hints

from engine.reasons import ReasonJson

CellJson = list[int]  # [x, y]
EdgeJson = list[list[int]]  # [[x, y], [x, y]]


class Stamped(TypedDict):
    """What every event carries: the turn it happened in (RULES 3)."""

    turn: NotRequired[int]


# --- setup and the turn (RULES 2.3, 3) ------------------------------------------------


class Placed(Stamped):
    """RULES 2.3: a castle and its knight placed in the variable setup."""

    kind: Literal["placed"]
    player: str
    colour: str
    castle: CellJson
    knight: CellJson


class Reveal(Stamped):
    """RULES 3.1: the next action card turned over."""

    kind: Literal["reveal"]
    card: str
    start_player: str


class Decided(Stamped):
    """RULES 3.2 (sealed): the player has chosen; what is not told yet."""

    kind: Literal["decided"]
    player: str


class Decision(Stamped):
    """RULES 3.2 (open): the player's cards, and the politics card with each (or null)."""

    kind: Literal["decision"]
    player: str
    cards: list[int]
    politics: list[str | None]


class ChoiceJson(TypedDict):
    cards: list[int]
    politics: list[str | None]


class Revealed(Stamped):
    """RULES 3.2 (sealed): every player's decision at once."""

    kind: Literal["revealed"]
    decisions: dict[str, ChoiceJson]


class PoliticsReturned(Stamped):
    """RULES 3.2, 7: a sealed politics card no longer playable at the reveal goes back."""

    kind: Literal["politics_returned"]
    player: str
    card: str
    reason: ReasonJson  # why, as a code and its values (engine.reasons)


class Money(Stamped):
    """RULES 3.3: a money action shared equally among its choosers."""

    kind: Literal["money"]
    action: str
    players: list[str]
    each: int


class NothingToDo(Stamped):
    """An action its one chooser cannot perform at all, skipped."""

    kind: Literal["nothing_to_do"]
    player: str
    action: str


class Perform(Stamped):
    """The game waits for `player` to perform `action`."""

    kind: Literal["perform"]
    player: str
    action: str


class Declined(Stamped):
    """RULES 3: the performer passed."""

    kind: Literal["declined"]
    player: str
    action: str


class TurnEnd(Stamped):
    """RULES 3.4."""

    kind: Literal["turn_end"]


# --- contests (RULES 4) -------------------------------------------------------------------


class Negotiation(Stamped):
    """RULES 4.1: two players chose the same action."""

    kind: Literal["negotiation"]
    action: str
    players: list[str]


class OfferMade(Stamped):
    kind: Literal["offer"]
    player: str
    ducats: int
    other: str


class Accepted(Stamped):
    """RULES 4.1: `player` took `payer`'s offer; the payer acts alone."""

    kind: Literal["accepted"]
    player: str
    payer: str
    ducats: int


class BrokenOff(Stamped):
    kind: Literal["broken_off"]
    player: str


class Duel(Stamped):
    """RULES 4.2: sealed bids; round 2 is the re-duel after a tie."""

    kind: Literal["duel"]
    action: str
    players: list[str]
    round: int


class BidMade(Stamped):
    kind: Literal["bid_made"]
    player: str


class BidJson(TypedDict):
    ducats: int
    treasure: list[int]
    total: int


class Bids(Stamped):
    """RULES 4.2: the bids of a round, revealed together."""

    kind: Literal["bids"]
    round: int
    bids: dict[str, BidJson]


class DuelWon(Stamped):
    kind: Literal["duel_won"]
    player: str
    paid: int


class DuelVoid(Stamped):
    """RULES 4.2: a second tie; nobody acts."""

    kind: Literal["duel_void"]
    players: list[str]


# --- actions (RULES 5) ---------------------------------------------------------------------


class WallPlaced(Stamped):
    kind: Literal["wall"]
    player: str
    wall: EdgeJson


class KnightPlaced(Stamped):
    kind: Literal["knight"]
    player: str
    cell: CellJson
    fee: int


class Expanded(Stamped):
    """RULES 5.3, 6.2."""

    kind: Literal["expanded"]
    player: str
    castle: CellJson
    cells: list[CellJson]
    points: int


class Looks(Stamped):
    """RULES 5.4: the performer looks through a politics pile."""

    kind: Literal["looks"]
    player: str
    pile: int


class TookCard(Stamped):
    """RULES 5.4: public: that a card was taken, from which pile."""

    kind: Literal["took_card"]
    player: str
    pile: int


class CardTaken(Stamped):
    """RULES 5.4: secret: which card, for the taker alone."""

    kind: Literal["card"]
    to: str
    card: str


# --- scoring (RULES 6) ---------------------------------------------------------------------


class Founded(Stamped):
    """RULES 6.1."""

    kind: Literal["founded"]
    owner: str
    castle: CellJson
    size: int
    towns: int
    points: int


class Lost(Stamped):
    """RULES 6.2: the victim of an expansion loses the cells taken."""

    kind: Literal["lost"]
    player: str
    castle: CellJson
    cells: int
    points: int


class Severed(Stamped):
    """RULES 6.2: a piece cut off the victim's region."""

    kind: Literal["severed"]
    player: str
    castle: CellJson
    size: int
    towns: int
    points: int


class Silver(Stamped):
    """RULES 6.3."""

    kind: Literal["silver"]
    player: str
    hills: int
    points: int


# --- politics and payments (RULES 7) ----------------------------------------------------------


class AllianceMade(Stamped):
    kind: Literal["alliance"]
    player: str
    castles: list[CellJson]


class AllianceBroken(Stamped):
    kind: Literal["alliance_broken"]
    player: str
    castles: list[CellJson]


class RenegadePlayed(Stamped):
    kind: Literal["renegade"]
    player: str
    removed: CellJson
    owner: str


# What a payment is for (RULES 5.2 the forest fee, 6.2 breaking an alliance): a code,
# worded by the site.
PaidFor = Literal[
    "knights_on_forest", "knight_on_forest", "renegade_knights_on_forest", "alliance_break"
]

# `for` is a keyword, so this one is spelt the functional way.
Paid = TypedDict(
    "Paid",
    {
        "turn": NotRequired[int],
        "kind": Literal["paid"],
        "player": str,
        "amount": int,
        "ducats": int,
        "treasure": list[int],
        "for": PaidFor,
    },
)


# --- the end (RULES 8) ------------------------------------------------------------------------


class FinalHills(Stamped):
    kind: Literal["final_hills"]
    player: str
    hills: int
    points: int


class Parchment(Stamped):
    kind: Literal["parchment"]
    player: str
    points: int


class GameOver(Stamped):
    kind: Literal["game_over"]
    winners: list[str]
    power: dict[str, int]


class EndGame(Stamped):
    """`python -m engine.scenario` only: hill scoring at the end of a scenario."""

    kind: Literal["end_game"]
    player: str
    hills: int
    points: int


Event = (
    Placed
    | Reveal
    | Decided
    | Decision
    | Revealed
    | PoliticsReturned
    | Money
    | NothingToDo
    | Perform
    | Declined
    | TurnEnd
    | Negotiation
    | OfferMade
    | Accepted
    | BrokenOff
    | Duel
    | BidMade
    | Bids
    | DuelWon
    | DuelVoid
    | WallPlaced
    | KnightPlaced
    | Expanded
    | Looks
    | TookCard
    | CardTaken
    | Founded
    | Lost
    | Severed
    | Silver
    | AllianceMade
    | AllianceBroken
    | RenegadePlayed
    | Paid
    | FinalHills
    | Parchment
    | GameOver
    | EndGame
)
Log = list[Event]


def new_log() -> Log:
    return []


EVENT_TYPES: tuple[type, ...] = get_args(Event)


def kind_of(event_type: type) -> str:
    """The `kind` an event type is for, read from its `Literal`."""
    (kind,) = get_args(get_type_hints(event_type)["kind"])
    return str(kind)


EVENT_TYPE_OF_KIND: dict[str, type] = {kind_of(t): t for t in EVENT_TYPES}
ENGINE_EVENT_KINDS: frozenset[str] = frozenset(EVENT_TYPE_OF_KIND)
