"""Why the rules refuse a submission: a code and its values, and the one English sentence
of each code (`SENTENCES`).

A `Reason` is that sentence (a `str`, so that it reads and compares as one) carrying its
code and values, which the site stores instead of the words (`as_json`) and words again
when it is read (`sentence`). Values are data, never words: cells in notation ("F7"),
colours, numbers, lists of those. Each sentence is whole, with named placeholders, so
that it can be translated as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

Value = str | int | list[str]


def N_(text: str) -> str:
    """Marks a sentence for the site's translations (its `makemessages` extracts `N_`);
    the engine itself keeps the English."""
    return text


class ReasonJson(TypedDict):
    """A reason as the site stores it."""

    code: str
    values: dict[str, Value]


SENTENCES: dict[str, str] = {
    # --- the board and its pieces (RULES 2.3, 5)
    "not_on_board": N_("{cell} is not on the board"),
    "taken_by_castle": N_("{cell} is taken by the {owner} castle at {cell}"),
    "taken_by_knight": N_("{cell} is taken by the {owner} knight at {cell}"),
    "castle_not_on_plain": N_("the castle must stand on a plain cell, and {cell} is not one"),
    "knight_not_on_plain": N_("the knight must stand on a plain cell, and {cell} is not one"),
    "knight_away_from_castle": N_("the knight at {cell} must be next to its castle"),
    "castle_too_close": N_(
        "{cell} is too close to the {colour} castle at {castle}: same-colour castles "
        "need {between} cells between them"
    ),
    # --- paying (RULES 7.3)
    "no_treasure_card": N_("{colour} holds no Treasure card worth {value}"),
    "nothing_to_pay": N_("there is nothing to pay, so no Treasure card is needed"),
    "treasure_to_spare": N_("fewer Treasure cards already pay the {amount} ducats due"),
    "too_few_ducats": N_("{colour} has {ducats} ducats, {needed} are needed"),
    # --- walls (RULES 5.1)
    "wall_not_on_board": N_("{one}/{other} is not on the board"),
    "wall_already_there": N_("there is already a wall between {one} and {other}"),
    "wall_supply_empty": N_("the wall supply is empty"),
    "wall_region_limit": N_("{colour} owns {regions} regions and may place no more walls"),
    "wall_separates_knights": N_(
        "a wall may not separate the {colour} knight at {one} from the {colour} knight at {other}"
    ),
    "wall_separates_knight_and_castle": N_(
        "a wall may not separate the {colour} knight at {one} from the {colour} castle at {other}"
    ),
    "wall_inside_region": N_("{one}/{other} lies inside the {owner} region"),
    # --- knights (RULES 5.2)
    "no_knight_in_supply": N_("{colour} has no knight left in supply"),
    "knight_on_hill": N_("a knight may not stand on a hill ({cell})"),
    "knight_on_town": N_("a knight may not stand on a town ({cell})"),
    "knight_not_linked": N_(
        "{cell} is not next to a {colour} knight or castle without a wall between them"
    ),
    # --- expansion (RULES 5.3)
    "expansion_size": N_("an expansion takes 1 or 2 cells"),
    "no_own_region_at": N_("{colour} has no region with its castle at {castle}"),
    "borders_no_region": N_("{cell} does not border any {colour} region"),
    "borders_several_regions": N_(
        "{cell} borders several {colour} regions (castles {castles}): "
        "say which, e.g. 'from {castle}'"
    ),
    "already_in_region": N_("{cell} is already in the region"),
    "not_next_to_region": N_("{cell} is not next to the region"),
    "region_holds_castle": N_(
        "{cell} holds the {owner} castle at {cell}, and a region holds one castle only"
    ),
    "cell_holds_knight": N_("{cell} holds the {owner} knight at {cell}"),
    "own_other_region": N_("{cell} is in another {colour} region"),
    "allied_region": N_("the region is allied with the {owner} region at {castle}"),
    "stronger_region": N_(
        "the {owner} region at {castle} has strength {theirs}, not less than this region's {mine}"
    ),
    "walls_to_enclose": N_(
        "enclosing the grown region needs {needed} more walls than the {supply} in supply"
    ),
    # --- politics (RULES 7)
    "no_region_at": N_("there is no region with its castle at {castle}"),
    "region_is_own": N_("the region at {castle} is {colour}'s own"),
    "region_is_neutral": N_("the region at {castle} is neutral, not another player's"),
    "no_shared_wall": N_("the regions at {own} and {other} share no wall"),
    "already_allied": N_("the regions at {own} and {other} are already allied"),
    "not_allied": N_("the regions at {own} and {other} are not allied"),
    "not_a_party": N_("{colour} is not a party to the alliance of {own} and {other}"),
    "no_knight_at": N_("there is no knight at {cell}"),
    "knight_is_own": N_("the knight at {cell} is {colour}'s own"),
    "knight_is_neutral": N_("the knight at {cell} is neutral, not another player's"),
    "knight_outside_region": N_("the {owner} knight at {cell} does not stand in a {owner} region"),
    "region_borders_none": N_("the {owner} region at {castle} borders no {colour} region"),
    "only_link": N_(
        "the {owner} knight at {cell} is the only link between other {owner} pieces, "
        "so it may not be removed"
    ),
    "renegade_not_bordering": N_(
        "{cell} is not in a {colour} region bordering the {owner} region at {castle}"
    ),
    "promised_elsewhere": N_(
        "{colour} has promised {promised} of {ducats} ducats in an offer or bid, too many "
        "to pay for ending the alliance now"
    ),
    "treasure_card_bid": N_("the Treasure card worth {value} is bid in the duel"),
    # --- the game's phases (RULES 3, 4, 5.4, 9)
    "not_a_player": N_("{colour} does not play in this game"),
    "game_over": N_("the game is over"),
    "waiting_for_others": N_("the game is waiting for {waiting}, not for {colour}"),
    "waits_for_placement": N_("the game waits for a castle and a knight, like 'place C3 D3' now"),
    "waits_for_decision": N_("the game waits for a decision, like 'decide 2' now"),
    "waits_for_negotiation": N_(
        "the game waits for an offer ('offer 3'), 'accept' or 'break off' now"
    ),
    "waits_for_bid": N_("the game waits for a sealed bid, like 'bid 5' or 'bid 2 treasure 10' now"),
    "waits_for_walls": N_(
        "the game waits for up to {most} walls, like 'walls F7/F8', or 'pass' now"
    ),
    "waits_for_swords": N_(
        "the game waits for knights or an expansion, like 'knight F7', or 'pass' now"
    ),
    "waits_for_pile": N_("the game waits for a politics pile to look through, like 'pile 1' now"),
    "waits_for_card": N_(
        "the game waits for a card from the pile, like 'take alliance', or 'pass' now"
    ),
    "one_decision_card": N_("{colour} chooses {count} decision card this turn"),
    "decision_cards": N_("{colour} chooses {count} decision cards this turn"),
    "decision_card_numbers": N_("decision cards are 1, 2 and 3, each at most once"),
    "alliance_cards_in_hand": N_("{colour} has {count} Alliance card(s) in hand"),
    "renegade_cards_in_hand": N_("{colour} has {count} Renegade card(s) in hand"),
    "offer_range": N_("an offer is of ducats you have: 0 to {ducats}"),
    "no_offer": N_("there is no offer from {colour} to accept"),
    "offer_gone": N_("{colour} no longer has the {ducats} ducats offered"),
    "bid_range": N_("a bid is of ducats you have: 0 to {ducats}"),
    "wall_count": N_("this action places 1 to {most} walls, not {count}"),
    "one_sword": N_("this action allows one knight or one expansion"),
    "two_swords": N_("this action allows two knights, or one knight and one expansion"),
    "no_such_pile": N_("there are politics piles 1 and 2"),
    "pile_empty": N_("politics pile {pile} is empty"),
    "card_not_in_pile": N_("pile {pile} holds no '{card}' card"),
}


def sentence(code: str, values: Mapping[str, Any]) -> str:
    """The English sentence of a reason's code with its values filled in."""
    return SENTENCES[code].format(**{k: _shown(v) for k, v in values.items()})


def _shown(value: object) -> object:
    """A list of values as English lists them: "C3, F7 and J2"."""
    if not isinstance(value, list):
        return value
    items = [str(v) for v in value]
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


class Reason(str):
    """A refusal's English sentence that carries its code and values: it reads, prints
    and compares as the sentence, and the site stores `as_json()`."""

    code: str
    values: dict[str, Value]

    def __new__(cls, code: str, **values: Value) -> Reason:
        made = super().__new__(cls, sentence(code, values))
        made.code, made.values = code, values
        return made

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuilt, (self.code, self.values))

    def as_json(self) -> ReasonJson:
        return {"code": self.code, "values": dict(self.values)}


def _rebuilt(code: str, values: dict[str, Value]) -> Reason:
    return Reason(code, **values)
