"""Django's translations for a language without the empty catalogues at their end.

Python's `gettext.translation` reads, for "en_GB", the catalogue of "en" too, as the
fallback of "en_GB"'s; Django merges each app's "en_GB" catalogue into its own and
keeps those fallbacks, chained. Django and its contrib apps ship an "en" catalogue that
holds nothing but its header (English is their source language), so every sentence the
site says in English (its source language too) walked a chain of five such empty
catalogues before coming back untranslated, and every German or Italian sentence a
catalogue lacks did the same after the English one: the game page's 350 sentences
spent more time there than in any of its catalogues (bench figure `game-page`).

A catalogue that holds no message answers nothing, so dropping it from the chain
changes no sentence: `compact` does, for each language's translation as Django makes
it (`install`, from `GamesConfig.ready`).
"""

from __future__ import annotations

import gettext as gettext_module
from collections.abc import Callable
from functools import wraps

from django.utils.translation import trans_real

COMPACTED = "_lowenherz_compacted"  # set on a translation object once compacted


def is_empty(catalogue: gettext_module.NullTranslations) -> bool:
    """A plain catalogue (not one of Django's merged ones) holding only its header."""
    if type(catalogue) is not gettext_module.GNUTranslations:
        return False
    return all(key == "" for key in catalogue._catalog)  # type: ignore[attr-defined]


def compact(translation: gettext_module.NullTranslations) -> None:
    """Drop the empty catalogues from the chain of fallbacks that starts at `translation`."""
    link = translation
    while link._fallback is not None:  # type: ignore[attr-defined]
        following = link._fallback  # type: ignore[attr-defined]
        if is_empty(following):
            link._fallback = following._fallback  # type: ignore[attr-defined]
        else:
            link = following


def install() -> None:
    """Every translation Django makes (`trans_real.translation`, which caches them by
    language and which activating a language asks) compacted once, when first asked."""
    original: Callable[[str], trans_real.DjangoTranslation] = trans_real.translation
    if getattr(original, COMPACTED, False):
        return

    @wraps(original)
    def translation(language: str) -> trans_real.DjangoTranslation:
        found = original(language)
        if not getattr(found, COMPACTED, False):
            compact(found)
            setattr(found, COMPACTED, True)
        return found

    setattr(translation, COMPACTED, True)
    trans_real.translation = translation
