"""The rules page's headings and the links to its sections (games.show.rules_text):
`{% rules_heading "5.4" %}` draws the section's heading with the anchor every citation
links to, `{% rules_link "5.4" %}` a link to it, `{{ citation|rules_link }}` the same for
a help line's citation."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from games.show.rules_text import Citation, heading

register = template.Library()


@register.simple_tag
def rules_heading(section: str) -> SafeString:
    """ "5.4" is `<h3 id="s5-4">5.4 The crown</h3>`; a section "5" an `<h2>` (the page's
    title is its `<h1>`)."""
    shown = heading(section)
    level = shown.level + 1
    return format_html(
        '<h{} id="{}" class="rules-heading h{}">{} {}</h{}>',
        level,
        shown.anchor,
        level + 1,
        shown.section,
        shown.title,
        level,
    )


@register.simple_tag(name="rules_link")
def rules_link_tag(section: str) -> SafeString:
    return Citation(section).link()


@register.filter
def rules_link(citation: Citation) -> SafeString:
    return citation.link()
