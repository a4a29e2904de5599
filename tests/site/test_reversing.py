"""`{% url %}` in the site's templates reverses each URL once per process
(games.reversing, games.templatetags.cached_url) and says what Django's would: for the
URLconf, script prefix and arguments in force when it is asked."""

from __future__ import annotations

import pytest
from django.template import Context, Template
from django.test import override_settings
from django.urls import NoReverseMatch, clear_script_prefix, reverse, set_script_prefix

from games.reversing import reverse_cached
from games.templatetags.cached_url import CachedURLNode


def rendered(source: str, **context: object) -> str:
    return Template(source).render(Context(context))


def test_the_site_templates_url_tag_is_the_cached_one() -> None:
    nodes = Template("{% url 'lobby' %}").nodelist
    assert isinstance(nodes[0], CachedURLNode)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("{% url 'lobby' %}", reverse("lobby")),
        ("{% url 'game_live' 7 %}", reverse("game_live", args=[7])),
        ("{% url 'game_live' pk %}", reverse("game_live", args=[42])),
        ("{% url 'game_live' game_id=pk %}", reverse("game_live", kwargs={"game_id": 42})),
        ("{% url 'game_live' pk as there %}[{{ there }}]", f"[{reverse('game_live', args=[42])}]"),
        ("{% url 'no_such_view' as there %}[{{ there }}]", "[]"),
    ],
)
def test_says_what_djangos_says(source: str, expected: str) -> None:
    assert rendered(source, pk=42) == expected
    assert rendered(source, pk=42) == expected  # the second time from what was kept


def test_an_unknown_view_is_an_error_each_time() -> None:
    for _ in range(2):
        with pytest.raises(NoReverseMatch):
            rendered("{% url 'no_such_view' %}")


def test_each_script_prefix_its_own_urls() -> None:
    """A site served under /sub/ links under /sub/, though the same view was reversed
    before under /."""
    assert reverse_cached("lobby") == "/"
    set_script_prefix("/sub/")
    try:
        assert reverse_cached("lobby") == "/sub/"
        assert rendered("{% url 'game_live' 3 %}") == "/sub/games/3/live/"
    finally:
        clear_script_prefix()
    assert reverse_cached("lobby") == "/"


def test_each_urlconf_its_own_urls() -> None:
    with pytest.raises(NoReverseMatch):
        reverse_cached("bench_minimal")
    with override_settings(ROOT_URLCONF="bench.urls"):
        assert reverse_cached("bench_minimal") == "/bench/minimal/"
