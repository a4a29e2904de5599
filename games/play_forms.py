"""Forms that build a submission from fields and hand back its text in the engine's
notation (`engine.notation.format_move`).

They check shape only (a cell is a cell, a wall lies between two cells); whether a
submission is legal is the engine's business, so nothing here knows a rule. The
choices a form offers (Treasure cards, the cards of a politics pile, alliances) come
from the viewer's own view of the game.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, cast

from django import forms
from django.utils.translation import gettext, ngettext, pgettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from engine.board import Cell, Edge
from engine.errors import NotationError
from engine.moves import (
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
from engine.notation import (
    MAX_MOVE_CHARS,
    format_cell,
    format_move,
    parse_cell,
    parse_edge,
)
from engine.view import View as EngineView
from games.show.board_svg import WALL, default_kind
from games.show.command_words import to_reader
from games.show.view_text import examples
from games.show.words import action_text, card_name, refusal_text

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

View = Mapping[str, Any]  # the engine's view (engine.view.View), read by key
CARD_NUMBERS = (1, 2, 3)
# Every text field has a limit, checked (by Django's max_length) before its clean_ reads
# it: the board's cells and walls, however many, stay far below these.
CELLS_MAX_CHARS = 200
WALLS_MAX_CHARS = MAX_MOVE_CHARS


# --- reading fields --------------------------------------------------------------------------


def _cells(text: str) -> list[Cell]:
    try:
        return [parse_cell(word) for word in text.replace(",", " ").split()]
    except NotationError as error:
        raise forms.ValidationError(refusal_text(error)) from None


def _one_cell(text: str) -> Cell:
    cells = _cells(text)
    if len(cells) != 1:
        raise forms.ValidationError(gettext("write one cell, like F7"))
    return cells[0]


def _edges(text: str) -> list[Edge]:
    try:
        return [parse_edge(word) for word in text.replace(",", " ").split()]
    except NotationError as error:
        raise forms.ValidationError(refusal_text(error)) from None


def cell_input(
    label: StrOrPromise, single: bool, kind: str, required: bool = True, default: bool = False
) -> Any:
    """A text field the board's clicks fill (board.js): one cell, or several; the
    `default` field of a form receives clicks before any field is focused. `kind` says
    which of the ask's targets are legal for it (games.show.board_svg.CELL_KINDS): board.js
    highlights those while the field is focused."""
    attrs = {
        "data-board-target": "cell",
        "data-board-kind": kind,
        "autocomplete": "off",
        "placeholder": "F7" if single else "F7 G7",
    }
    if single:
        attrs["data-board-single"] = "1"
    if default:
        attrs["data-board-default"] = "1"
    return forms.CharField(
        label=label,
        required=required,
        max_length=CELLS_MAX_CHARS,
        widget=forms.TextInput(attrs=attrs),
    )


def _treasure_values(v: View) -> list[int]:
    """The viewer's Treasure cards: from what they are asked, else from their hand."""
    ask = v.get("ask") or {}
    if "treasure" in ask:
        return sorted(ask["treasure"])
    hand = (v.get("players", {}).get(v.get("viewer") or "", {})).get("hand", [])
    return sorted(int(c.split()[1]) for c in hand if c.startswith("treasure "))


def add_treasure_field(form: forms.Form, v: View) -> None:
    """Checkboxes for the viewer's Treasure cards, if they hold any."""
    choices = [(str(t), card_name(f"treasure {t}")) for t in _treasure_values(v)]
    if choices:
        form.fields["treasure"] = forms.MultipleChoiceField(
            label=_("Treasure cards to spend"),
            required=False,
            choices=choices,
            widget=forms.CheckboxSelectMultiple,
        )


def _treasure(data: dict[str, Any]) -> tuple[int, ...]:
    return tuple(int(x) for x in data.get("treasure") or ())


# --- the forms -----------------------------------------------------------------------------


class PlayForm(forms.Form):
    """A form for one kind of submission; `move_text()` is its notation. The page
    renders it with `templates/games/_form.html` (ids `<kind>-form`, `<kind>-submit`)."""

    kind: ClassVar[str] = ""
    button: ClassVar[StrOrPromise] = _("Submit")
    button_class: ClassVar[str] = "btn-primary"
    # The page writes the phase the form is made for in a hidden `phase` field, so that
    # a form from a phase gone by is refused (services.submit); not read by the form.
    for_a_phase: ClassVar[bool] = True

    def __init__(
        self,
        data: Any = None,
        *,
        view: View | None = None,
        action: str = "",
        phase_number: int | None = None,
    ) -> None:
        super().__init__(data, auto_id=f"{self.kind}-%s")
        self.view: View = view or {}
        self.action = action
        self.phase_number = phase_number if self.for_a_phase else None
        self.setup()

    @property
    def form_id(self) -> str:
        return f"{self.kind}-form"

    @property
    def submit_id(self) -> str:
        return f"{self.kind}-submit"

    def setup(self) -> None:
        """Adjust fields to the view (labels, choices)."""

    def button_label(self) -> str:
        return str(self.button)

    def choice_field(self, name: str) -> forms.ChoiceField:
        """A field whose choices come from the view (declared as a ChoiceField)."""
        field = self.fields[name]
        assert isinstance(field, forms.ChoiceField), name
        return field

    @property
    def ask(self) -> dict[str, Any]:
        return self.view.get("ask") or {}

    def submission(self) -> Submission:
        raise NotImplementedError

    def move_text(self) -> str:
        """The submission in notation; call after `is_valid()`."""
        return format_move(self.submission())


class PlacementForm(PlayForm):
    kind, button = "place", _("Place castle and knight")
    castle = cell_input(_("Castle"), single=True, kind="castle", default=True)
    knight = cell_input(_("Knight (next to the castle)"), single=True, kind="knight")

    def clean_castle(self) -> Cell:
        return _one_cell(self.cleaned_data["castle"])

    def clean_knight(self) -> Cell:
        return _one_cell(self.cleaned_data["knight"])

    def submission(self) -> Submission:
        return Place(self.cleaned_data["castle"], self.cleaned_data["knight"])


class DecisionForm(PlayForm):
    """One or two decision cards; optionally an Alliance or Renegade with one of them."""

    kind, button = "decide", _("Decide")
    cards = forms.TypedMultipleChoiceField(
        label=_("Decision cards"),
        coerce=int,
        widget=forms.CheckboxSelectMultiple,
        choices=[(n, str(n)) for n in CARD_NUMBERS],
    )
    politics = forms.ChoiceField(label=_("Play a politics card"), required=False, choices=[])
    politics_with = forms.TypedChoiceField(
        label=_("…with decision card"),
        coerce=int,
        required=False,
        empty_value=None,
        choices=[("", _("the first chosen")), *[(n, str(n)) for n in CARD_NUMBERS]],
    )
    # The engine lists no targets for politics cards: no cell is highlighted for these.
    first = cell_input(
        _("Alliance: your region's castle · Renegade: the knight to remove"),
        single=True,
        kind="politics",
        required=False,
    )
    second = cell_input(
        _("Alliance: the other region's castle · Renegade: the cell for your knight"),
        single=True,
        kind="politics",
        required=False,
    )

    def setup(self) -> None:
        card = (self.view.get("card") or "").split()
        if len(card) == 3:
            self.choice_field("cards").choices = [
                (n, f"{n}: {action_text(card[n - 1])}") for n in CARD_NUMBERS
            ]
        count = self.ask.get("cards", 1)
        self.fields["cards"].help_text = ngettext(
            "Choose %(count)s card.", "Choose %(count)s cards.", count
        ) % {"count": count}
        held = self.ask.get("politics") or []
        if not held:
            for name in ("politics", "politics_with", "first", "second"):
                del self.fields[name]
            return
        self.choice_field("politics").choices = [
            ("", pgettext("no politics card", "none")),
            *[(c, card_name(c)) for c in held],
        ]

    def clean_cards(self) -> list[int]:
        cards = self.cleaned_data["cards"]
        if len(cards) > 2:
            raise forms.ValidationError(gettext("choose one decision card or two"))
        return cards

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("politics"):
            data["first"] = _one_cell(data.get("first") or "")
            data["second"] = _one_cell(data.get("second") or "")
            with_card = data.get("politics_with")
            if with_card is not None and with_card not in (data.get("cards") or ()):
                raise forms.ValidationError(
                    gettext("the politics card goes with one of the decision cards you choose")
                )
        return data

    def submission(self) -> Submission:
        data = self.cleaned_data
        politics = self._politics()
        carrier = data.get("politics_with") or data["cards"][0]
        return Decide(tuple(Choice(c, politics if c == carrier else None) for c in data["cards"]))

    def _politics(self) -> Alliance | Renegade | None:
        kind = self.cleaned_data.get("politics")
        # clean() made both cells whenever a politics card is played
        first: Cell = self.cleaned_data.get("first") or (0, 0)
        second: Cell = self.cleaned_data.get("second") or (0, 0)
        if kind == "alliance":
            return Alliance(first, second)
        if kind == "renegade":
            return Renegade(first, second)
        return None


class OfferForm(PlayForm):
    kind, button = "offer", _("Make the offer")
    ducats = forms.IntegerField(label=_("Ducats you pay to act alone"), min_value=0)

    def setup(self) -> None:
        if "max_offer" in self.ask:
            self.fields["ducats"].widget.attrs["max"] = self.ask["max_offer"]

    def submission(self) -> Submission:
        return Offer(self.cleaned_data["ducats"])


class AcceptForm(PlayForm):
    kind, button, button_class = "accept", _("Accept the offer"), "btn-success"

    def button_label(self) -> str:
        offer = self.ask.get("offer")
        if not offer:
            return str(self.button)
        return ngettext("Accept %(count)s ducat", "Accept %(count)s ducats", offer[1]) % {
            "count": offer[1]
        }

    def submission(self) -> Submission:
        return Accept()


class BreakOffForm(PlayForm):
    kind, button, button_class = "break-off", _("Break off (duel)"), "btn-outline-danger"

    def submission(self) -> Submission:
        return BreakOff()


class BidForm(PlayForm):
    kind, button = "bid", _("Bid (sealed)")
    ducats = forms.IntegerField(label=_("Ducats"), min_value=0, initial=0)

    def setup(self) -> None:
        add_treasure_field(self, self.view)
        if "max_ducats" in self.ask:
            self.fields["ducats"].widget.attrs["max"] = self.ask["max_ducats"]

    def submission(self) -> Submission:
        return Bid(self.cleaned_data["ducats"], _treasure(self.cleaned_data))


class WallsForm(PlayForm):
    kind, button = "walls", _("Place walls")
    walls = forms.CharField(
        label=_("Walls, in the order placed"),
        help_text=_("Click edges on the board, or type them like F7/F8 G7/G8."),
        max_length=WALLS_MAX_CHARS,
        widget=forms.TextInput(
            attrs={
                "data-board-target": "wall",
                "data-board-kind": WALL,
                "data-board-default": "1",
                "autocomplete": "off",
                "placeholder": "F7/F8 G7/G8",
            }
        ),
    )

    def clean_walls(self) -> list[Edge]:
        return _edges(self.cleaned_data["walls"])

    def submission(self) -> Submission:
        return Walls(tuple(self.cleaned_data["walls"]))


class SwordsForm(PlayForm):
    """Knights and at most one expansion; the engine says how many the action allows."""

    kind, button = "swords", _("Place knights / expand")
    knights = cell_input(
        _("New knights"), single=False, kind="knight", required=False, default=True
    )
    expand = cell_input(
        _("Expansion: 1 or 2 cells, in order"), single=False, kind="expansion", required=False
    )
    expand_from = cell_input(
        _("…of the region with the castle at (if you own several)"),
        single=True,
        kind="region",
        required=False,
    )
    expand_first = forms.BooleanField(label=_("Expand before placing knights"), required=False)

    def setup(self) -> None:
        add_treasure_field(self, self.view)
        if default_kind(self.ask) == "expansion":  # no knight can be placed: expand first
            self.fields["knights"].widget.attrs.pop("data-board-default", None)
            self.fields["expand"].widget.attrs["data-board-default"] = "1"

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for name in ("knights", "expand"):
            data[name] = _cells(data.get(name) or "")
        if len(data["expand"]) > 2:
            raise forms.ValidationError(gettext("an expansion takes 1 or 2 cells"))
        origin = data.get("expand_from")
        data["expand_from"] = _one_cell(origin) if origin else None
        if not data["knights"] and not data["expand"]:
            raise forms.ValidationError(gettext("name a cell for a knight or an expansion"))
        return data

    def submission(self) -> Submission:
        data = self.cleaned_data
        steps: list[Knight | Expand] = [Knight(c) for c in data["knights"]]
        if data["expand"]:
            expansion = Expand(tuple(data["expand"]), data["expand_from"])
            steps.insert(0 if data["expand_first"] else len(steps), expansion)
        return Swords(tuple(steps), _treasure(data))


class PileForm(PlayForm):
    kind, button = "pile", _("Look through this pile")
    pile = forms.TypedChoiceField(
        label=_("Politics pile"), coerce=int, widget=forms.RadioSelect, choices=[(1, "1"), (2, "2")]
    )

    def setup(self) -> None:
        sizes = self.ask.get("piles") or self.view.get("politics_piles") or [0, 0]
        self.choice_field("pile").choices = [
            (
                n,
                ngettext("Pile %(pile)s (%(count)s card)", "Pile %(pile)s (%(count)s cards)", size)
                % {"pile": n, "count": size},
            )
            for n, size in enumerate(sizes, start=1)
        ]

    def submission(self) -> Submission:
        return ChoosePile(self.cleaned_data["pile"])


class TakeForm(PlayForm):
    kind, button = "take", _("Take this card")
    card = forms.ChoiceField(label=_("Card"), widget=forms.RadioSelect, choices=[])

    def setup(self) -> None:
        cards = sorted(set(self.view.get("pile_cards") or []))
        self.choice_field("card").choices = [(c, card_name(c)) for c in cards]

    def submission(self) -> Submission:
        return TakeCard(self.cleaned_data["card"])


class PassForm(PlayForm):
    kind, button = "pass", _("Pass (decline the action)")
    button_class = "btn-outline-secondary"

    def submission(self) -> Submission:
        return Pass()


class EndAllianceForm(PlayForm):
    """RULES 7.1 allows it at any time; the choices are the alliances of own castles.
    So it is made for no phase: an older page's form still ends the alliance."""

    kind, button = "end-alliance", _("End the alliance (10 ducats)")
    button_class = "btn-outline-danger"
    for_a_phase = False
    alliance = forms.ChoiceField(label=pgettext_lazy("between two regions", "Alliance"), choices=[])

    def setup(self) -> None:
        self.choice_field("alliance").choices = [
            (
                f"{format_cell(own)} {format_cell(other)}",
                gettext("your region at %(own)s with %(other)s")
                % {"own": format_cell(own), "other": format_cell(other)},
            )
            for own, other in own_alliances(self.view)
        ]
        add_treasure_field(self, self.view)

    def submission(self) -> Submission:
        own, other = _cells(self.cleaned_data["alliance"])
        return EndAlliance(own, other, _treasure(self.cleaned_data))


class MoveTextForm(PlayForm):
    """The plain text fallback: any submission in the engine's notation."""

    kind, button = "move", _("Submit")
    move = forms.CharField(
        label=_("Move in notation"),
        max_length=MAX_MOVE_CHARS,
        widget=forms.TextInput(
            attrs={"autocomplete": "off", "data-board-target": "any", "data-board-kind": "any"}
        ),
    )

    def __init__(
        self,
        data: Any = None,
        *,
        view: View | None = None,
        action: str = "",
        phase_number: int | None = None,
    ) -> None:
        super().__init__(data, view=view, action=action, phase_number=phase_number)
        self.auto_id = "%s-text"  # the field's id is "move-text"

    def setup(self) -> None:
        # The first reply the emails suggest for this view; with nothing asked, what may
        # still be typed: ending an alliance.
        example = next(
            iter(examples(cast(EngineView, self.view))), to_reader("break alliance C3 H5")
        )
        self.fields["move"].widget.attrs["placeholder"] = example

    def move_text(self) -> str:
        return self.cleaned_data["move"]


def own_alliances(v: View) -> list[tuple[Cell, Cell]]:
    """The alliances one of whose castles is the viewer's, own castle first."""
    mine = {(x, y) for x, y, colour in v.get("castles", []) if colour == v.get("viewer")}
    found = []
    for a, b in v.get("alliances", []):
        one, two = (a[0], a[1]), (b[0], b[1])
        if one in mine or two in mine:
            found.append((one, two) if one in mine else (two, one))
    return found


FORMS: dict[str, type[PlayForm]] = {
    form.kind: form
    for form in (
        PlacementForm,
        DecisionForm,
        OfferForm,
        AcceptForm,
        BreakOffForm,
        BidForm,
        WallsForm,
        SwordsForm,
        PileForm,
        TakeForm,
        PassForm,
        EndAllianceForm,
        MoveTextForm,
    )
}


def forms_for(v: View, action: str, phase_number: int | None = None) -> list[PlayForm]:
    """The structured forms for what the view asks of its viewer (none if nothing)."""
    return [
        FORMS[kind](view=v, action=action, phase_number=phase_number) for kind in asked_kinds(v)
    ]


def asked_kinds(v: View) -> list[str]:
    ask = v.get("ask")
    if not ask:
        return []
    phase, action = ask.get("phase"), ask.get("action") or ""
    if phase == "negotiation":
        offer = ask.get("offer")
        return [
            "offer",
            *(["accept"] if offer and offer[0] != v.get("viewer") else []),
            "break-off",
        ]
    if phase == "perform":
        return [{"W": "walls", "S": "swords"}.get(action[:1], "pile"), "pass"]
    return {
        "placement": ["place"],
        "decision": ["decide"],
        "duel": ["bid"],
        "crown": ["take", "pass"],
    }.get(phase or "", [])


def form_from_post(
    v: View, data: Any, action: str, phase_number: int | None = None
) -> PlayForm | None:
    """The form named by the POST's `form` field, bound to the POST, or None."""
    form_class = FORMS.get(data.get("form", ""))
    return (
        None
        if form_class is None
        else form_class(data, view=v, action=action, phase_number=phase_number)
    )
