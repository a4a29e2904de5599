"""The notation reader on hostile text (security issue 9, D1): oversize text is refused
before any reading, with a short sentence that does not echo it, and reading is linear
on any text within the bound.

No clock is asserted: the size limit is checked by what the error says, and linearity by
a timeout (pytest-timeout) far above what a linear reader needs on 100,000 characters and
far below what the old quadratic `re.sub(r"\\s*/\\s*")` took (minutes)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import notation
from engine.errors import NotationError
from engine.moves import Pass, Walls
from engine.notation import MAX_MOVE_CHARS, parse_cell, parse_edge, parse_move


def test_a_move_over_the_limit_is_refused_before_it_is_read() -> None:
    text = "pass" + " " * MAX_MOVE_CHARS
    with pytest.raises(
        NotationError,
        match=f"a move is at most {MAX_MOVE_CHARS} characters, and this one has {len(text)}",
    ):
        parse_move(text)


def test_a_move_at_the_limit_is_read() -> None:
    assert parse_move("pass" + " " * (MAX_MOVE_CHARS - 4)) == Pass()


def test_the_refusal_of_a_long_move_quotes_only_its_start() -> None:
    with pytest.raises(NotationError) as refused:
        parse_move("walls " + "F7/F8 " * 10_000)
    assert len(str(refused.value)) < 200


@pytest.mark.parametrize("parse", [parse_cell, parse_edge])
def test_a_long_cell_or_wall_is_refused_before_it_is_read(parse) -> None:
    with pytest.raises(NotationError, match=r"is too long for a (cell|wall): 100001 characters"):
        parse("F" + " " * 100_000)


def test_spaces_around_a_slash_still_join_a_wall() -> None:
    assert parse_move("walls F7 / F8") == Walls((parse_edge("F7/F8"),))
    assert parse_edge("  F8 /F7 ") == parse_edge("F7/F8")


def test_an_error_about_one_word_quotes_the_move_only_so_far() -> None:
    with pytest.raises(NotationError) as refused:
        parse_move("walls F7/F8 " + "G7/G8 " * 70 + "X")
    quoted = str(refused.value).split("': ")[0]
    assert len(quoted) <= notation.MAX_QUOTED_MOVE + 1 and quoted.endswith("…")


# --- linear: 100,000 characters within seconds, where the old reader took minutes ------------
# The limit above is checked first, so these call the reading steps under it directly.

RUNS = ["", "/", "F7", "F7/", "/F8"]


@pytest.mark.timeout(5)
@pytest.mark.parametrize("tail", RUNS)
def test_the_words_of_a_long_run_of_spaces_are_read_in_linear_time(tail: str) -> None:
    words = notation._Words("walls F7" + " " * 100_000 + tail)
    assert words.words[0] == "walls"


@pytest.mark.timeout(5)
def test_closing_slashes_is_linear_on_long_runs() -> None:
    spaces = " " * 100_000  # not followed by a slash: the old regex scanned it from each start
    assert notation._close_slashes(f"F7{spaces}F8 / G8") == f"F7{spaces}F8/G8"


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=" \t\n/,F7x", max_size=2 * MAX_MOVE_CHARS))
def test_any_text_is_a_move_or_a_notation_error(text: str) -> None:
    try:
        parse_move(text)
    except NotationError as error:
        assert len(str(error)) < 1000  # a sentence, never the text sent back whole
