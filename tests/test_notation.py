"""The text notation of submissions (engine/notation.py): examples of every form,
round trips of arbitrary submissions, tolerance of how players type, and errors
that say what was expected. Plain Python: no database, no Django."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.board import Cell, Edge, format_cell, make_edge
from engine.errors import NotationError
from engine.moves import (
    POLITICS_CARDS,
    Accept,
    Alliance,
    Bid,
    BreakOff,
    Choice,
    ChoosePile,
    Decide,
    EndAlliance,
    Expand,
    Knight,
    Offer,
    Pass,
    Place,
    Renegade,
    Submission,
    Swords,
    TakeCard,
    Walls,
)
from engine.notation import format_move, parse_cell, parse_edge, parse_move

F7, F8, G7, G8 = (5, 6), (5, 7), (6, 6), (6, 7)
C3, D3, H5 = (2, 2), (3, 2), (7, 4)

# --- cells and walls ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cell"),
    [
        ("F7", (5, 6)),
        ("A1", (0, 0)),
        ("f7", (5, 6)),
        (" O10 ", (14, 9)),
        ("Z1", (25, 0)),
        ("AA1", (26, 0)),
        ("AD3", (29, 2)),
        ("ba12", (52, 11)),
    ],
)
def test_a_cell_is_read_from_its_column_letters_and_row_number(text: str, cell: Cell) -> None:
    assert parse_cell(text) == cell


@given(st.integers(0, 2000), st.integers(0, 2000))
def test_every_cell_round_trips_through_its_name(x: int, y: int) -> None:
    assert parse_cell(format_cell((x, y))) == (x, y)


@pytest.mark.parametrize("text", ["Z0", "F", "7", "7F", "F-1", "", "F 7", "Ä1", "F²"])
def test_a_cell_without_a_letter_and_a_row_from_1_is_refused(text: str) -> None:
    with pytest.raises(NotationError, match="is not a cell: write a column letter and a row"):
        parse_cell(text)


def test_a_wall_is_read_in_either_order_in_its_one_spelling() -> None:
    assert parse_edge("F7/F8") == parse_edge("f8 / f7") == (F7, F8)
    assert parse_edge("G7/F7") == (F7, G7)


def test_a_wall_between_cells_not_side_by_side_is_refused() -> None:
    with pytest.raises(NotationError, match="F7/G8: a wall lies between two cells side by side"):
        parse_edge("F7/G8")


@pytest.mark.parametrize("text", ["F7", "F7/F8/F9", "F7-F8", "F7/", "/F8"])
def test_a_wall_without_two_cells_is_refused(text: str) -> None:
    with pytest.raises(NotationError, match="is not a wall: write the two cells it lies between"):
        parse_edge(text)


# --- one example of every form -----------------------------------------------------------

EXAMPLES: list[tuple[str, Submission]] = [
    ("place C3 D3", Place(C3, D3)),
    ("decide 2", Decide((Choice(2),))),
    ("decide 1, 3", Decide((Choice(1), Choice(3)))),
    ("decide 2 alliance C3 H5", Decide((Choice(2, Alliance(C3, H5)),))),
    ("decide 2 renegade F7 G7", Decide((Choice(2, Renegade(F7, G7)),))),
    ("decide 2 renegade F7 G7 treasure 10 12", Decide((Choice(2, Renegade(F7, G7, (10, 12))),))),
    ("decide 1 alliance C3 H5, 3", Decide((Choice(1, Alliance(C3, H5)), Choice(3)))),
    (
        "decide 1 renegade F7 G7 treasure 8, 3 alliance C3 H5",
        Decide((Choice(1, Renegade(F7, G7, (8,))), Choice(3, Alliance(C3, H5)))),
    ),
    ("offer 3", Offer(3)),
    ("offer 0", Offer(0)),
    ("accept", Accept()),
    ("break off", BreakOff()),
    ("bid 5", Bid(5)),
    ("bid 5 treasure 10 12", Bid(5, (10, 12))),
    ("bid 0 treasure 8", Bid(0, (8,))),
    ("walls F7/F8", Walls(((F7, F8),))),
    ("walls F7/F8 G7/G8", Walls(((F7, F8), (G7, G8)))),
    ("knight F7", Swords((Knight(F7),))),
    ("knight F7, knight G7", Swords((Knight(F7), Knight(G7)))),
    ("knight F7, expand G7 G8", Swords((Knight(F7), Expand((G7, G8))))),
    ("expand F7 F8 from C3", Swords((Expand((F7, F8), C3),))),
    ("expand F7, knight G7", Swords((Expand((F7,)), Knight(G7)))),
    ("knight F7, knight G7 treasure 10", Swords((Knight(F7), Knight(G7)), (10,))),
    ("pile 1", ChoosePile(1)),
    ("take treasure 10", TakeCard("treasure 10")),
    ("take alliance", TakeCard("alliance")),
    ("pass", Pass()),
    ("break alliance C3 H5", EndAlliance(C3, H5)),
    ("break alliance C3 H5 treasure 12", EndAlliance(C3, H5, (12,))),
]


@pytest.mark.parametrize(("text", "sub"), EXAMPLES, ids=[text for text, _ in EXAMPLES])
def test_each_form_is_written_in_its_canonical_text(text: str, sub: Submission) -> None:
    assert format_move(sub) == text


@pytest.mark.parametrize(("text", "sub"), EXAMPLES, ids=[text for text, _ in EXAMPLES])
def test_each_canonical_text_is_read_back(text: str, sub: Submission) -> None:
    assert parse_move(text) == sub


def test_a_bid_with_treasure_round_trips() -> None:
    assert parse_move(format_move(Bid(5, (10, 12)))) == Bid(5, (10, 12))


def test_every_politics_card_can_be_taken_by_its_name() -> None:
    for card in set(POLITICS_CARDS):
        assert parse_move(f"take {card}") == TakeCard(card)


def test_wide_boards_use_columns_of_several_letters() -> None:
    sub = Swords((Expand(((26, 0), (27, 0)), (29, 9)),))
    assert format_move(sub) == "expand AA1 AB1 from AD10"
    assert parse_move("expand aa1 ab1 from ad10") == sub


# --- the alternatives a player may type --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sub"),
    [
        ("decide 1 3", Decide((Choice(1), Choice(3)))),
        ("decide 1,3", Decide((Choice(1), Choice(3)))),
        ("decide 1 alliance C3 H5 3", Decide((Choice(1, Alliance(C3, H5)), Choice(3)))),
        ("break", BreakOff()),
        ("bid treasure 8", Bid(0, (8,))),
        ("wall F7/F8", Walls(((F7, F8),))),
        ("walls F8/F7, G7 / G8", Walls(((F7, F8), (G7, G8)))),
        ("knight F7 knight G7", Swords((Knight(F7), Knight(G7)))),
        ("knight F7\nknight G7\ntreasure 10", Swords((Knight(F7), Knight(G7)), (10,))),
        ("knight F7,expand G7", Swords((Knight(F7), Expand((G7,))))),
        # several cells after 'knight', as the game page's knights field takes them
        ("knight F7 G7", Swords((Knight(F7), Knight(G7)))),
        ("knights F7, G7 treasure 10", Swords((Knight(F7), Knight(G7)), (10,))),
        ("knight F7 G7, expand G8", Swords((Knight(F7), Knight(G7), Expand((G8,))))),
        ("expand G8, knight F7 G7", Swords((Expand((G8,)), Knight(F7), Knight(G7)))),
        ("look 2", ChoosePile(2)),
        ("decline", Pass()),
        ("skip", Pass()),
        ("take Parchment   5", TakeCard("parchment 5")),
    ],
)
def test_the_listed_alternatives_are_read(text: str, sub: Submission) -> None:
    assert parse_move(text) == sub


@pytest.mark.parametrize(
    ("text", "sub"),
    [
        ("  PLACE c3   d3 ", Place(C3, D3)),
        ("Decide 1 ALLIANCE c3 h5 ,  3", Decide((Choice(1, Alliance(C3, H5)), Choice(3)))),
        ("BREAK   Off", BreakOff()),
        ("\tBid 5 Treasure 10\t12\n", Bid(5, (10, 12))),
        ("Knight f7 ,Expand g7 G8 FROM c3", Swords((Knight(F7), Expand((G7, G8), C3)))),
        ("Break Alliance c3 h5", EndAlliance(C3, H5)),
    ],
)
def test_any_case_and_extra_spaces_are_read(text: str, sub: Submission) -> None:
    assert parse_move(text) == sub


def test_treasure_numbers_run_until_a_comma_so_renegade_treasure_is_written_before_it() -> None:
    # Without the comma "3" would be one more Treasure card: the canonical form keeps it.
    sub = Decide((Choice(1, Renegade(F7, G7, (10,))), Choice(3)))
    assert format_move(sub) == "decide 1 renegade F7 G7 treasure 10, 3"
    assert parse_move("decide 1 renegade F7 G7 treasure 10 3") == Decide(
        (Choice(1, Renegade(F7, G7, (10, 3))),)
    )


def test_parsing_does_not_check_the_rules() -> None:
    # Far off any 15 x 10 board, two equal cards, two expansions: the game refuses these.
    assert parse_move("walls ZZ99/ZZ100") == Walls((((701, 98), (701, 99)),))
    assert parse_move("decide 2, 2") == Decide((Choice(2), Choice(2)))
    assert parse_move("expand F7, expand G7") == Swords((Expand((F7,)), Expand((G7,))))


# --- round trips of arbitrary submissions ------------------------------------------------

# The basic board (15 x 10) and wider ones up to 30 columns, where AA..AD appear.
BOARD_SIZES = st.sampled_from([(15, 10), (30, 10), (27, 15), (30, 30)])
amounts = st.integers(min_value=0, max_value=10**12)
treasures = st.lists(st.integers(min_value=1, max_value=10**6), max_size=4).map(tuple)


@st.composite
def cells(draw: st.DrawFn) -> Cell:
    width, height = draw(BOARD_SIZES)
    return draw(st.integers(0, width - 1)), draw(st.integers(0, height - 1))


@st.composite
def edges(draw: st.DrawFn) -> Edge:
    width, height = draw(BOARD_SIZES)
    x, y = draw(st.integers(0, width - 1)), draw(st.integers(0, height - 1))
    around = [(x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)]
    other = draw(st.sampled_from([(a, b) for a, b in around if 0 <= a < width and 0 <= b < height]))
    return make_edge((x, y), other)


politics = st.one_of(
    st.none(),
    st.builds(Alliance, cells(), cells()),
    st.builds(Renegade, cells(), cells(), treasures),
)
choices = st.builds(Choice, st.integers(1, 3), politics)
steps = st.one_of(
    st.builds(Knight, cells()),
    st.builds(Expand, st.lists(cells(), min_size=1, max_size=2).map(tuple), st.none() | cells()),
)

SUBMISSIONS: dict[str, st.SearchStrategy[Submission]] = {
    "place": st.builds(Place, cells(), cells()),
    "decide": st.builds(Decide, st.lists(choices, min_size=1, max_size=2).map(tuple)),
    "offer": st.builds(Offer, amounts),
    "accept": st.just(Accept()),
    "break off": st.just(BreakOff()),
    "bid": st.builds(Bid, amounts, treasures),
    "walls": st.builds(Walls, st.lists(edges(), min_size=1, max_size=6).map(tuple)),
    "swords": st.builds(Swords, st.lists(steps, min_size=1, max_size=3).map(tuple), treasures),
    "pile": st.builds(ChoosePile, st.integers(1, 2)),
    "take": st.builds(TakeCard, st.sampled_from(POLITICS_CARDS)),
    "pass": st.just(Pass()),
    "break alliance": st.builds(EndAlliance, cells(), cells(), treasures),
}
submissions = st.one_of(*SUBMISSIONS.values())


@pytest.mark.parametrize("kind", SUBMISSIONS)
@given(data=st.data())
def test_every_submission_of_each_kind_round_trips(kind: str, data: st.DataObject) -> None:
    sub = data.draw(SUBMISSIONS[kind])
    assert parse_move(format_move(sub)) == sub


@given(submissions, st.data())
def test_every_submission_round_trips_in_any_case_and_spacing(
    sub: Submission, data: st.DataObject
) -> None:
    text = format_move(sub)
    messy = "".join(data.draw(st.sampled_from([ch.lower(), ch.upper()])) for ch in text)
    gaps = st.text(" \t\n", min_size=1, max_size=3)
    messy = "".join(data.draw(gaps) if ch == " " else ch for ch in messy)
    messy = data.draw(st.text(" \t", max_size=2)) + messy + data.draw(st.text(" \t\n", max_size=2))
    assert parse_move(messy) == sub


@given(submissions)
def test_the_canonical_text_is_read_and_written_back_unchanged(sub: Submission) -> None:
    text = format_move(sub)
    assert format_move(parse_move(text)) == text
    assert text == " ".join(text.split())  # one space between words, none at the ends


# --- errors that say what was expected ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "an empty move: write a command"),
        ("   \n ", "an empty move: write a command"),
        ("wals F7/F8", "unknown command 'wals': expected one of place, decide, .* break alliance"),
        ("5", "unknown command '5'"),
        ("place C3", "after 'place' write the castle's cell and then the knight's cell"),
        ("place C3 D3 E3", "after 'place' write the castle's cell and then the knight's cell"),
        ("place C3 Z0", r"^'place C3 Z0': 'Z0' is not a cell: write a column letter and a row"),
        ("decide", "after 'decide' write one or two decision cards"),
        ("decide 0", "the decision cards are 1, 2 and 3"),
        ("decide 4", "the decision cards are 1, 2 and 3"),
        ("decide 1, 2, 3", "decide with one decision card or two"),
        ("decide 1,", "after 'decide' write one or two decision cards"),
        ("decide two", "after 'decide' write one or two decision cards"),
        ("decide 2 alliance C3 H5 renegade F7 G7", "at most one Alliance or Renegade"),
        ("decide 2 alliance C3", "after 'decide' write one or two decision cards"),
        ("decide 2 renegade F7 G7 treasure", "after 'treasure' write the values of one or more"),
        ("offer", "after 'offer' write an amount of ducats, like 'offer 3'"),
        ("offer -3", r"^'offer -3': after 'offer' write an amount of ducats"),
        ("offer 3.5", "after 'offer' write an amount of ducats"),
        ("accept 3", "'accept' takes nothing after it"),
        ("break up", "write 'break off' to end a negotiation, or 'break alliance C3 H5'"),
        ("bid five", r"^'bid five': after 'bid' write an amount of ducats, like 'bid 5' or"),
        ("bid", "after 'bid' write an amount of ducats"),
        ("bid 5 treasure", "after 'treasure' write the values of one or more Treasure cards"),
        ("bid 5 treasure 0", "after 'treasure' write the values of one or more Treasure cards"),
        ("bid 5 treasure -8", "after 'treasure' write the values of one or more Treasure cards"),
        ("walls", "after 'walls' write one or more walls, like 'walls F7/F8'"),
        ("walls F7/G8", "F7/G8: a wall lies between two cells side by side, like F7/F8"),
        ("walls F7 F8", "'F7' is not a wall: write the two cells it lies between"),
        ("knight", "write knights and an expansion one after another"),
        ("knight F7, walls F7/F8", "write knights and an expansion one after another"),
        ("knight F7,", "write knights and an expansion one after another"),
        ("expand G7 G8 from C3 F7", "write knights and an expansion one after another"),
        ("expand", "an expansion takes 1 or 2 cells"),
        ("expand from C3", "an expansion takes 1 or 2 cells"),
        ("expand F7 F8 F9", "an expansion takes 1 or 2 cells"),
        ("expand F7 from", "write knights and an expansion one after another"),
        ("knight F7 treasure 10, knight G7", "Treasure cards come last, after all the steps"),
        ("pile", "after 'pile' write which pile, 1 or 2"),
        ("pile 3", "after 'pile' write which pile, 1 or 2"),
        ("look one", "after 'look' write which pile, 1 or 2"),
        ("take", "after 'take' write a politics card: one of alliance, renegade, treasure 8"),
        (
            "take gold",
            "unknown card 'gold': write one of alliance, renegade, treasure 8, .*parchment 5",
        ),
        ("take treasure 9", "unknown card 'treasure 9'"),
        ("pass now", "'pass' takes nothing after it"),
        ("skip it", "'skip' takes nothing after it"),
        ("break alliance C3", "after 'break alliance' write your region's castle and the other"),
        ("break alliance C3 H5 12", "after 'break alliance' write your region's castle"),
    ],
)
def test_a_malformed_move_is_refused_saying_what_was_expected(text: str, expected: str) -> None:
    with pytest.raises(NotationError, match=expected):
        parse_move(text)


def test_a_notation_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_move("wals")


def test_an_absurdly_long_number_is_a_notation_error_not_a_crash() -> None:
    with pytest.raises(NotationError, match="after 'offer' write an amount of ducats"):
        parse_move("offer " + "9" * 400)  # longer than int() reads, within MAX_MOVE_CHARS


def test_only_submissions_can_be_written() -> None:
    with pytest.raises(TypeError, match="not a submission"):
        format_move("pass")  # type: ignore[arg-type]
