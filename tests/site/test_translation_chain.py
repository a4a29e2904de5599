"""The translations the site reads are Django's without the empty catalogues at their
end (games.translation_chain), and say every sentence as Django's own would."""

from __future__ import annotations

import gettext as gettext_module

import pytest
from django.conf import settings
from django.utils.translation import trans_real

from games.translation_chain import is_empty

LANGUAGES = [code for code, _ in settings.LANGUAGES]


def chain(translation: gettext_module.NullTranslations) -> list[gettext_module.NullTranslations]:
    found = []
    link: gettext_module.NullTranslations | None = translation
    while link is not None:
        found.append(link)
        link = link._fallback  # type: ignore[attr-defined]
    return found


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_empty_catalogue_is_walked(language: str) -> None:
    walked = chain(trans_real.translation(language))
    assert walked[0].language() == language
    assert not [link for link in walked if is_empty(link)]


def test_django_made_empty_catalogues_to_drop() -> None:
    """What the compaction is for: Django's own English translation chains them."""
    assert [link for link in chain(trans_real.DjangoTranslation("en-gb")) if is_empty(link)]


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_sentence_says_what_djangos_translation_says(language: str) -> None:
    """Every message of every catalogue read (ours, Django's, its apps'), singular and
    plural, and one that no catalogue holds, translated alike by the site's compacted
    translation and by one Django makes afresh."""
    compacted, fresh = trans_real.translation(language), trans_real.DjangoTranslation(language)
    assert compacted is not fresh
    # .keys(): Django's merged catalogue (TranslationCatalog) has no iteration of its own.
    keys = {key for link in chain(fresh) for key in link._catalog.keys()}  # type: ignore[attr-defined]  # noqa: SIM118
    singular = {key for key in keys if isinstance(key, str) and key}
    plural = {key[0] for key in keys if isinstance(key, tuple)}
    assert len(singular) > 300  # en-gb: Django's; de, it: ours too
    for message in [*singular, "A sentence no catalogue holds"]:
        assert compacted.gettext(message) == fresh.gettext(message), message
    for message in plural:
        for n in (0, 1, 2, 5):
            assert compacted.ngettext(message, message, n) == fresh.ngettext(message, message, n)
