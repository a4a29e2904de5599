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
    values: dict[str, Value | ReasonJson]


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
    # --- the notation: text that is not a move (engine.notation)
    "not_a_cell": N_("'{text}' is not a cell: write a column letter and a row number, like F7"),
    "not_a_wall": N_("'{text}' is not a wall: write the two cells it lies between, like F7/F8"),
    "wall_cells_apart": N_("{text}: a wall lies between two cells side by side, like F7/F8"),
    "cell_too_long": N_("'{text}' is too long for a cell: {length} characters, at most {limit}"),
    "wall_too_long": N_("'{text}' is too long for a wall: {length} characters, at most {limit}"),
    "move_too_long": N_(
        "a move is at most {limit} characters, and this one has {length}: '{text}'"
    ),
    "empty_move": N_("an empty move: write a command, like 'decide 2' or 'pass'"),
    "unknown_command": N_("unknown command '{word}': expected one of {commands}"),
    "in_move": N_("'{move}': {detail}"),
    "unreadable": N_("this cannot be read as a move"),
    "hint_place": N_(
        "after 'place' write the castle's cell and then the knight's cell, like 'place C3 D3'"
    ),
    "hint_decide": N_(
        "after 'decide' write one or two decision cards (1, 2 or 3), each maybe followed by "
        "an Alliance or Renegade, like 'decide 2', 'decide 1, 3' or 'decide 2 alliance C3 H5'"
    ),
    "decide_one_or_two": N_(
        "decide with one decision card or two, like 'decide 2' or 'decide 1, 3'"
    ),
    "decision_cards_are": N_("the decision cards are 1, 2 and 3, like 'decide 2'"),
    "one_politics_per_card": N_(
        "a decision card carries at most one Alliance or Renegade, "
        "like 'decide 1 alliance C3 H5, 3 renegade F7 G7'"
    ),
    "treasure_values": N_(
        "after 'treasure' write the values of one or more Treasure cards, like 'treasure 10 12'"
    ),
    "hint_offer": N_("after 'offer' write an amount of ducats, like 'offer 3'"),
    "takes_nothing": N_("'{command}' takes nothing after it"),
    "hint_break": N_(
        "write 'break off' to end a negotiation, or 'break alliance C3 H5' to end an alliance"
    ),
    "hint_end_alliance": N_(
        "after 'break alliance' write your region's castle and the other region's castle, "
        "like 'break alliance C3 H5' or 'break alliance C3 H5 treasure 10'"
    ),
    "hint_bid": N_("after 'bid' write an amount of ducats, like 'bid 5' or 'bid 5 treasure 10'"),
    "hint_walls": N_(
        "after 'walls' write one or more walls, like 'walls F7/F8' or 'walls F7/F8 G7/G8'"
    ),
    "hint_swords": N_(
        "write knights and an expansion one after another, then maybe Treasure cards, "
        "like 'knight F7 G7', 'knight F7, expand G7 G8 from C3' or 'knight F7 treasure 10'"
    ),
    "treasure_last": N_(
        "Treasure cards come last, after all the steps, like 'knight F7, knight G7 treasure 10'"
    ),
    "expansion_cells": N_(
        "an expansion takes 1 or 2 cells, like 'expand G7' or 'expand G7 G8 from C3'"
    ),
    "hint_pile": N_("after '{command}' write which pile, 1 or 2, like 'pile 1'"),
    "hint_take": N_("after 'take' write a politics card: one of {names}"),
    "unknown_card": N_("unknown card '{card}': write one of {names}"),
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
        """The code and values, a reason among them (the detail of a move that cannot be
        read) as its own code and values."""
        values = {k: v.as_json() if isinstance(v, Reason) else v for k, v in self.values.items()}
        return {"code": self.code, "values": values}


def _rebuilt(code: str, values: dict[str, Value]) -> Reason:
    return Reason(code, **values)
