"""`{% url %}` as Django's, with each URL reversed once per process
(games.reversing): a builtin of the site's templates (settings.TEMPLATES), so every
`{% url %}` of theirs is this one."""

from __future__ import annotations

from django import template
from django.template.base import Parser, Token
from django.template.context import Context
from django.template.defaulttags import URLNode
from django.template.defaulttags import url as django_url
from django.urls import NoReverseMatch
from django.utils.html import conditional_escape

from games.reversing import reverse_cached

register = template.Library()


class CachedURLNode(URLNode):
    def render(self, context: Context) -> str:
        view_name = self.view_name.resolve(context)
        args = [arg.resolve(context) for arg in self.args]
        if self.kwargs or ":" in view_name or not all(type(a) in (int, str) for a in args):
            # A namespace's view (its current app), keyword arguments, or an object that
            # says itself as it likes: Django's way.
            return super().render(context)
        try:
            url = reverse_cached(view_name, *args)
        except NoReverseMatch:
            if self.asvar is None:
                raise
            url = ""  # as Django's: `{% url ... as name %}` names "" for no such view
        if self.asvar:
            context[self.asvar] = url
            return ""
        return conditional_escape(url) if context.autoescape else url


@register.tag
def url(parser: Parser, token: Token) -> CachedURLNode:
    node = django_url(parser, token)
    return CachedURLNode(node.view_name, node.args, node.kwargs, node.asvar)
