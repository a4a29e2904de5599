"""The board as monospace text for emails (games.show.textboard), drawn from a view."""

from __future__ import annotations

from engine.view import view
from games.show.textboard import board_text
from tests.engine_helpers import game

SMALL = {
    "board": [".FH", "T..", "..."],
    "players": {"red": {}, "ochre": {}},
    "castles": [[0, 0, "red"], [2, 2, "ochre"], [1, 2, "grey"]],
    "knights": [[1, 0, "red"], [2, 1, "ochre"]],
    "walls": [[[0, 0], [1, 0]], [[1, 1], [1, 2]], [[1, 2], [2, 2]]],
}


def lines(v: dict) -> list[str]:
    """The board's lines, without the legend."""
    return board_text(v).split("\n\n")[0].splitlines()


def test_it_labels_columns_with_letters_and_rows_from_1():
    text = lines(SMALL)
    assert text[0] == "   A  B  C"
    assert [line[:2] for line in text if line[:2].strip().isdigit()] == [" 1", " 2", " 3"]


def test_each_cell_shows_its_terrain_then_its_piece():
    row1, row2, row3 = lines(SMALL)[1], lines(SMALL)[2], lines(SMALL)[4]
    assert row1 == " 1 .R|Fr H"  # a red castle on plain, a red knight on forest, a hill
    assert row2 == " 2 T  .  .o"  # a town, an ochre knight
    assert row3 == " 3 .  .G|.O"  # a grey (neutral) castle, an ochre castle


def test_walls_are_drawn_between_cells_and_below_cells():
    text = lines(SMALL)
    assert text[1][5] == "|"  # A1/B1: between the two cells
    assert text[3] == "      --"  # B2/B3: under B2
    assert text[4][8] == "|"  # B3/C3
    assert " 1 .R Fr H" in board_text({**SMALL, "walls": []})  # no wall, no mark


def test_the_legend_names_the_colours_present_in_seat_order():
    legend = board_text(SMALL).split("\n\n")[1]
    assert "R/r red, O/o ochre, G/g grey" in legend
    assert ". plain, F forest, H hill, T town" in legend


def test_the_basic_board_has_its_walls_castles_and_knights():
    v = view(game(), "red")
    text = "\n".join(lines(v))
    rows = [line for line in lines(v) if line[:2].strip().isdigit()]
    assert len(rows) == 10 and lines(v)[0].split() == list("ABCDEFGHIJKLMNO")
    assert text.count("|") == sum(1 for a, b in v["walls"] if a[1] == b[1])
    assert text.count("--") == sum(1 for a, b in v["walls"] if a[0] == b[0])
    castles = "".join(rows).count  # initials in upper case stand for castles
    assert sum(castles(c) for c in "ROLG") == len(v["castles"])
    assert sum(castles(c) for c in "rolg") == len(v["knights"])
    assert rows[0] == " 1 H  .R . |.  H  .  H  F  .  F  .  F |F  .O H"  # C1/D1 and L1/M1
    assert lines(v)[3] == "   -- -- --                            -- -- --"  # A2/A3 ...


def test_every_line_is_short_enough_for_an_email():
    assert max(len(line) for line in board_text(view(game(), "red")).splitlines()) <= 78
