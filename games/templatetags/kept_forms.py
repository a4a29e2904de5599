"""`{{ form|crispy_kept }}`: what `{{ form|crispy }}` draws, kept in this process for the
next form drawn from the same things.

Drawing a form through crispy's templates is most of the game page's template time, and
the page draws the same forms again and again (every poll that finds the game changed
fetches the page). A form is kept by its signature: its class and every attribute of
the form and of each field and widget that the drawing reads (labels, choices, widget
attributes, initial values). Two forms with one signature draw the same markup, so a
kept drawing never shows one viewer what another's form held: what differs between
viewers (a hand's Treasure cards, the players one may write to) is in the signature, and
so is the language it is drawn in (labels, choices and crispy's own words are translated).
A bound form (input kept after a refusal, with its errors), or one given initial values
(a message's draft), is drawn afresh every time: nobody's words are kept here.
"""

from __future__ import annotations

from typing import Any

from crispy_forms.templatetags.crispy_forms_filters import as_crispy_form
from crispy_forms.utils import TEMPLATE_PACK
from django import forms, template
from django.utils.safestring import SafeString
from django.utils.translation import get_language

from games.kept import Kept

register = template.Library()

KEPT_FORMS = 256  # drawings kept per process (a few KB each)
_kept: Kept[str, SafeString] = Kept(KEPT_FORMS)


def signature(form: forms.BaseForm) -> str | None:
    """Everything the drawing of an unbound form reads, as text; None for a form that
    is drawn afresh (bound, or given initial values)."""
    if form.is_bound or form.initial:
        return None
    helper = getattr(form, "helper", None)  # crispy's field tags read a few of its attributes
    helped = (
        None
        if helper is None
        else (
            helper.field_template,
            sorted((k, repr(v)) for k, v in helper.get_attributes(TEMPLATE_PACK).items()),
        )
    )
    fields = []
    for name, field in form.fields.items():
        widget = field.widget
        choices = getattr(widget, "choices", None)
        fields.append(
            (
                name,
                type(field).__qualname__,
                type(field).__module__,
                type(widget).__qualname__,
                type(widget).__module__,
                str(field.label),
                str(field.help_text),
                field.required,
                field.disabled,
                field.show_hidden_initial,
                field.localize,
                field.label_suffix,
                sorted((k, str(v)) for k, v in widget.attrs.items()),
                sorted((k, str(v)) for k, v in field.widget_attrs(widget).items()),
                None if choices is None else [(str(k), str(v)) for k, v in choices],
                widget.template_name,
                getattr(widget, "option_template_name", None),
                widget.is_required,
                widget.is_localized,
                repr(form.get_initial_for_field(field, name)),
            )
        )
    return repr(
        (
            get_language(),
            type(form).__qualname__,
            type(form).__module__,
            form.auto_id,
            form.prefix,
            form.label_suffix,
            form.use_required_attribute,
            getattr(form, "error_css_class", None),
            getattr(form, "required_css_class", None),
            helped,
            fields,
        )
    )


@register.filter
def crispy_kept(form: forms.BaseForm) -> Any:
    """`{{ form|crispy }}`, kept by the form's signature."""
    key = signature(form)
    if key is None:
        return as_crispy_form(form)
    return _kept.get_or_make(key, lambda: as_crispy_form(form))
