"""The board drawn as SVG from a view (games.show.board_svg): no database needed."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from django.utils import translation

from engine.board import DATA
from engine.notation import format_edge, parse_edge
from engine.view import view
from games.play_forms import SwordsForm
from games.show import board_svg
from games.show.board_svg import COLOURS, default_kind, render_board
from tests.engine_helpers import Play, game

SVG = "{http://www.w3.org/2000/svg}"


def basic_view(viewer: str | None = None) -> dict:
    return view(game(), viewer)


def parsed(svg: str) -> ET.Element:
    """Well-formed XML, or the test fails here."""
    return ET.fromstring(svg)


def with_class(root: ET.Element, name: str) -> list[ET.Element]:
    return [e for e in root.iter() if name in (e.get("class") or "").split()]


def performing_walls() -> tuple[dict, str]:
    """A view of the player who performs `W2` alone (RULES 3.3)."""
    play = Play(game(cards=("W2 S1 M5",)))
    s, a, b = play.order
    play.decide({s: "decide 1, 3", a: "decide 2", b: "decide 3"})
    assert play.state.phase.kind == "perform" and play.state.phase.waiting == [s]
    return view(play.state, s), s


def test_an_interactive_board_has_a_target_for_each_of_the_150_cells():
    root = parsed(render_board(basic_view(), interactive=True))
    cells = [e.get("data-cell") for e in with_class(root, "cell")]
    assert len(cells) == 150 == len(set(cells))
    assert {"A1", "O1", "F7", "A10", "O10"} <= set(cells)


def test_an_interactive_board_has_a_target_for_each_internal_edge():
    root = parsed(render_board(basic_view(), interactive=True))
    walls = {e.get("data-wall") for e in with_class(root, "edge")}
    assert len(walls) == 14 * 10 + 15 * 9
    assert {"F7/F8", "F7/G7", "N10/O10"} <= walls
    assert "O10/O11" not in walls  # the rim is no edge


def test_a_plain_board_has_no_click_targets():
    svg = render_board(basic_view())
    assert "data-cell=" not in svg and "data-wall=" not in svg and "<svg id=" not in svg
    assert "data-cell=" in render_board(basic_view(), interactive=True)


def test_the_board_gets_the_id_it_is_given():
    assert parsed(render_board(basic_view(), element_id="board")).get("id") == "board"
    assert parsed(render_board(basic_view(), interactive=True)).get("id") is None


def test_the_walls_of_the_basic_layout_are_drawn():
    layout = json.loads((DATA / "basic_layout.json").read_text(encoding="utf-8"))
    expected = {format_edge(parse_edge(w)) for w in layout["walls"]}
    root = parsed(render_board(basic_view()))
    drawn = {e.get("data-wall-at") for e in with_class(root, "wall")}
    assert drawn == expected and len(drawn) == 20


def test_castles_and_knights_are_drawn_in_their_colours():
    v = basic_view()
    root = parsed(render_board(v))
    castles, knights = with_class(root, "castle"), with_class(root, "knight")
    assert len(castles) == len(v["castles"]) == 12
    assert len(knights) == len(v["knights"]) == 12
    assert {c.get("fill") for c in castles} == set(COLOURS.values())
    assert all(k.get("fill") == COLOURS[k.get("class").split("-")[-1]] for k in knights)


def test_regions_are_tinted_in_their_owners_colour():
    v = basic_view()
    root = parsed(render_board(v))
    tinted = with_class(root, "region")
    assert len(tinted) == sum(r["size"] for r in v["regions"])
    red = [e for e in tinted if "region-red" in e.get("class")]
    assert red and all(e.get("fill") == COLOURS["red"] for e in red)


def test_neutral_zones_are_hatched():
    v = basic_view()
    v["neutral_zones"] = [{"cells": [[5, 5], [6, 5]], "size": 2, "towns": 0}]
    zones = with_class(parsed(render_board(v)), "neutral-zone")
    assert len(zones) == 2 and all(z.get("fill") == "url(#hatch)" for z in zones)


def test_the_rim_shows_column_letters_and_row_numbers():
    texts = [e.text for e in with_class(parsed(render_board(basic_view())), "coord")]
    assert texts == [*"ABCDEFGHIJKLMNO", *map(str, range(1, 11))]


def test_an_alliance_is_marked_on_the_border_of_the_two_regions():
    v = basic_view()
    v["regions"] = [
        {"owner": "red", "castle": [1, 0], "cells": [[1, 0], [2, 0]]},
        {"owner": "ochre", "castle": [3, 0], "cells": [[3, 0]]},
    ]
    v["alliances"] = [[[1, 0], [3, 0]]]
    marks = with_class(parsed(render_board(v)), "alliance")
    assert len(marks) == 1 and marks[0].tag == f"{SVG}circle"
    assert (marks[0].get("cx"), marks[0].get("cy")) == ("142.0", "42.0")  # on the C1/D1 edge


def test_an_alliance_of_regions_that_no_longer_touch_is_a_dashed_line():
    v = basic_view()
    v["alliances"] = [[[1, 0], [13, 0]]]
    marks = with_class(parsed(render_board(v)), "alliance")
    assert len(marks) == 1 and marks[0].tag == f"{SVG}line"


def test_legal_walls_are_marked_when_performing_walls():
    v, _ = performing_walls()
    legal = {format_edge(((a[0], a[1]), (b[0], b[1]))) for a, b in v["ask"]["edges"]}
    root = parsed(render_board(v, interactive=True))
    marked = {e.get("data-wall") for e in with_class(root, "edge") if "legal" in e.get("class")}
    assert legal and marked == legal
    assert len(marked) < len(with_class(root, "edge"))  # the walls of the layout, for one


def legal_for(root: ET.Element) -> dict[str, set[str]]:
    """Each target the board lists, by name, with the kinds of field it is legal for."""
    return {
        e.get("data-cell") or e.get("data-wall") or "": set(e.get("data-legal").split())
        for e in root.iter()
        if e.get("data-legal") is not None
    }


def marked_legal(root: ET.Element) -> set[str]:
    return {e.get("data-cell") or e.get("data-wall") or "" for e in with_class(root, "legal")}


def test_each_target_says_which_fields_it_is_legal_for():
    """Issue 10, item 5: knight cells for the knight field, expansion cells for the
    expansion field, castles for the field naming the expanding region (RULES 5.3)."""
    v = basic_view()
    v["ask"] = {
        "phase": "perform",
        "knights": [[5, 6], [1, 1]],
        "expansions": [[0, 2], [1, 1]],
        "expanding": [[0, 0]],
    }
    root = parsed(render_board(v, interactive=True))
    assert legal_for(root) == {
        "F7": {"knight"},
        "B2": {"knight", "expansion"},
        "A3": {"expansion"},
        "A1": {"region"},
    }


def test_before_any_script_only_the_default_field_s_targets_are_marked_legal():
    """The knight field is the swords form's default (games.play_forms): its cells are
    marked legal, the expansion's are not (board.js marks them for the expansion field)."""
    v = basic_view()
    v["ask"] = {"phase": "perform", "knights": [[5, 6]], "expansions": [[0, 2]]}
    assert marked_legal(parsed(render_board(v, interactive=True))) == {"F7"}
    v["ask"] = {"phase": "perform", "knights": [], "expansions": [[0, 2]]}
    assert marked_legal(parsed(render_board(v, interactive=True))) == {"A3"}
    v["ask"] = {"phase": "placement", "castles": [[0, 0]], "knights": [[1, 0]]}
    assert marked_legal(parsed(render_board(v, interactive=True))) == {"A1"}


def test_walls_are_legal_for_the_wall_field():
    v, _ = performing_walls()
    root = parsed(render_board(v, interactive=True))
    kinds = legal_for(root)
    assert kinds and all(k == {"wall"} for k in kinds.values())
    assert marked_legal(root) == set(kinds)


def test_the_default_kind_follows_the_ask():
    assert default_kind(None) is None
    assert default_kind({"phase": "decision", "cards": 1}) is None
    assert (
        default_kind({"phase": "placement", "castles": [[0, 0]], "knights": [[1, 0]]}) == "castle"
    )
    assert default_kind({"phase": "perform", "edges": [[[0, 0], [1, 0]]]}) == "wall"
    assert default_kind({"phase": "perform", "knights": [], "expansions": [[0, 0]]}) == "expansion"


def test_any_board_size_is_drawn():
    v = {
        "board": ["..F", "HT."],
        "castles": [[0, 0, "red"]],
        "knights": [[1, 0, "red"]],
        "walls": [[[0, 0], [0, 1]]],
    }
    root = parsed(render_board(v, interactive=True))
    assert [e.get("data-cell") for e in with_class(root, "cell")] == [
        "A1",
        "B1",
        "C1",
        "A2",
        "B2",
        "C2",
    ]
    assert len(with_class(root, "edge")) == 7
    assert root.get("viewBox") == "0 0 146 106"


def test_text_from_the_view_is_escaped():
    v = {
        "board": ["."],
        "castles": [[0, 0, '<script>"x"</script>']],
        "knights": [],
        "regions": [{"owner": "<b>", "castle": [0, 0], "cells": [[0, 0]]}],
    }
    svg = render_board(v)
    parsed(svg)
    assert "<script>" not in svg and "<b>" not in svg
    assert "&lt;script&gt;" in svg


def test_the_terrain_is_drawn_with_a_glyph_for_forest_hill_and_town():
    v = basic_view()
    root = parsed(render_board(v))
    rows = "".join(v["board"])
    for mark, name in (("F", "forest"), ("H", "hill"), ("T", "town")):
        assert len(with_class(root, name)) == rows.count(mark)
        assert len(re.findall(f'href="#glyph-{name}"', render_board(v))) == rows.count(mark)


def test_the_swords_form_fills_the_expansion_first_when_no_knight_can_be_placed():
    """The form's default field and the board's default kind agree (games.play_forms)."""

    def default_fields(ask: dict) -> list[str]:
        form = SwordsForm(view={"ask": ask})
        return [
            name
            for name, field in form.fields.items()
            if "data-board-default" in field.widget.attrs
        ]

    assert default_fields({"knights": [[5, 6]], "expansions": [[0, 2]]}) == ["knights"]
    assert default_fields({"knights": [], "expansions": [[0, 2]]}) == ["expand"]
    kinds = {
        name: field.widget.attrs.get("data-board-kind")
        for name, field in SwordsForm(view={}).fields.items()
    }
    assert kinds == {
        "knights": "knight",
        "expand": "expansion",
        "expand_from": "region",
        "expand_first": None,
    }


# --- thumbs, keys and screen readers; colours without colour (issue 24, item 2) -------------


def test_every_castle_and_knight_carries_its_colour_s_letter():
    v = basic_view()
    root = parsed(render_board(v))
    letters = [e.text for e in with_class(root, "piece-letter")]
    assert len(letters) == len(v["castles"]) + len(v["knights"])
    owners = [owner for *_, owner in v["castles"] + v["knights"]]
    assert letters == [{"red": "R", "ochre": "O", "lilac": "L", "grey": "G"}[o] for o in owners]


def test_each_player_s_regions_carry_a_pattern_of_their_own():
    v = basic_view()
    v["regions"] = [
        {"owner": colour, "castle": [x, 0], "cells": [[x, 0]]} for x, colour in enumerate(COLOURS)
    ]
    patterns = [e.get("fill") for e in with_class(parsed(render_board(v)), "region-pattern")]
    assert patterns == [f"url(#pattern-{colour})" for colour in COLOURS]
    svg = render_board(v)
    assert all(f'<pattern id="pattern-{colour}"' in svg for colour in COLOURS)


def test_an_interactive_board_is_a_group_of_cell_buttons_named_for_a_screen_reader():
    v = basic_view("red")
    v["regions"] = [{"owner": "red", "castle": [1, 0], "cells": [[1, 0], [1, 1]]}]
    v["walls"] = [[[1, 1], [1, 2]]]
    v["knights"] = [[1, 1, "red"]]
    root = parsed(render_board(v, interactive=True))
    assert root.get("role") == "group" and root.get("aria-describedby") == "board-keys"
    cells = with_class(root, "cell")
    assert {c.get("role") for c in cells} == {"button"}
    assert [c.get("tabindex") for c in cells].count("0") == 1  # one tab stop: arrows move on
    names = {c.get("data-cell"): c.get("aria-label") for c in cells}
    assert names["B2"] == "B2, plain, red knight, red region, wall below"
    assert names["B3"].endswith(", wall above")
    # The drawing is hidden from screen readers; the plain board is one picture.
    groups = [g for g in root.findall(f"{SVG}g") if g.get("class") != "cell-targets"]
    assert groups and all(g.get("aria-hidden") == "true" for g in groups)
    assert parsed(render_board(v)).get("role") == "img"


def test_the_cells_are_named_in_the_reader_s_language():
    v = basic_view("red")
    v["knights"] = [[5, 6, "red"]]
    with translation.override("de"):
        root = parsed(render_board(v, interactive=True))
        letters = {e.text for e in with_class(root, "piece-letter")}
    names = {c.get("data-cell"): c.get("aria-label") for c in with_class(root, "cell")}
    assert names["F7"].startswith("F7, ") and "Ritter von Rot" in names["F7"]
    assert letters <= {"R", "O", "L", "G"}


def test_the_board_s_own_size_gives_each_cell_44_css_pixels():
    """Where CSS leaves the board at its own size (a phone), a cell is a thumb's target."""
    root = parsed(render_board(basic_view(), interactive=True))
    width = float(root.get("width"))
    view_width = float(root.get("viewBox").split()[2])
    assert 40 * width / view_width >= 44


# --- drawings kept (board_svg.render_board) ---------------------------------------------


def _variants() -> list[tuple[dict, bool, str | None]]:
    """Views that differ from a first one in each part the board is drawn from (and in
    parts it is not), drawn plain and interactive, with and without an id."""
    first, walls_view = basic_view("red"), performing_walls()[0]
    changed = [first, walls_view, view(game(), None), view(game(), "ochre")]
    for key in board_svg.DRAWN:
        if key == "board":
            rows = list(first["board"])
            rows[0] = ("F" if rows[0][0] != "F" else "H") + rows[0][1:]
            changed.append({**first, "board": rows})
        elif key == "ask":
            changed.append({**first, "ask": walls_view.get("ask")})
        else:
            changed.append({**first, key: _other(key, first)})
    changed.append({**first, "players": {}})  # not drawn: the same drawing
    return [(v, how, ident) for v in changed for how in (False, True) for ident in (None, "b")]


def test_a_kept_drawing_is_the_one_drawn_afresh_whatever_changed():
    """Every part of the view the board is drawn from, the way it is drawn and the
    language are in the key: leave one out and a kept drawing of another view comes back."""
    board_svg._boards.clear()
    for language in ("en-gb", "de", "en-gb"):
        with translation.override(language):
            for v, how, ident in _variants():
                fresh = board_svg._draw(v, how, ident)
                assert render_board(v, interactive=how, element_id=ident) == fresh
                assert render_board(v, interactive=how, element_id=ident) == fresh


def test_a_bounded_number_of_drawings_kept():
    board_svg._boards.clear()
    v = basic_view()
    for n in range(board_svg.BOARDS_KEPT + 10):
        render_board(v, element_id=f"board-{n}")
    assert len(board_svg._boards) == board_svg.BOARDS_KEPT


def _other(key: str, v: dict) -> list:
    """Another value of the view's part `key` than `v`'s, of its shape."""
    castles = [r["castle"] for r in v["regions"]]
    other = {
        "regions": v["regions"][:-1],
        "neutral_zones": v["neutral_zones"][:-1] or [{"cells": [[0, 0], [0, 1]]}],
        "walls": [*v["walls"], [[0, 0], [1, 0]]],
        "alliances": [castles[:2]],
        "castles": v["castles"][:-1],
        "knights": [*v["knights"], [0, 0, "red"]],
    }[key]
    assert other != v.get(key, [])
    return other
