"""The German and Italian catalogues are complete (issue 23): extracting the messages
again from the code and templates (Django's makemessages, GNU gettext) finds none that
`locale/de` or `locale/it` lacks or no longer needs; every message is translated, none
fuzzy, with the same placeholders as its English; and the compiled catalogues the site
reads (`django.mo`, committed) say what their sources say.

`python3 dev.py messages` extracts and compiles them after a change.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = ("de", "it")
SOURCES = ("engine", "games", "lowenherz_site", "templates", "manage.py", "pyproject.toml")
# %(name)s and %s of Python's format, {name} of str.format (the engine's reasons).
PLACEHOLDER = re.compile(r"%\([a-z_]+\)[sd]|%[sd]|\{[a-z_]*\}")


def catalogue(language: str, root: Path = ROOT) -> polib.POFile:
    return polib.pofile(str(root / "locale" / language / "LC_MESSAGES" / "django.po"))


def key(entry: polib.POEntry) -> tuple[str, str]:
    return (entry.msgctxt or "", entry.msgid)


@pytest.fixture(scope="module")
def extracted(tmp_path_factory) -> Path:
    """A copy of the project whose catalogues makemessages has just made again."""
    if not shutil.which("xgettext"):
        pytest.fail("GNU gettext is missing: `bash scripts/services.sh` installs it")
    copy = tmp_path_factory.mktemp("extracted")
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, copy / name)
    shutil.copytree(ROOT / "locale", copy / "locale")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "lowenherz_site.test_settings"}
    env["PYTHONPATH"] = str(copy)
    languages = [arg for code in LANGUAGES for arg in ("-l", code)]
    subprocess.run(
        [sys.executable, "manage.py", "makemessages", *languages, "--no-obsolete"],
        cwd=copy,
        env=env,
        check=True,
        capture_output=True,
    )
    return copy


@pytest.mark.parametrize("language", LANGUAGES)
def test_extracting_again_finds_nothing_missing_and_nothing_stale(extracted, language):
    again = {key(e) for e in catalogue(language, extracted) if not e.obsolete}
    kept = {key(e) for e in catalogue(language) if not e.obsolete}
    assert sorted(again - kept) == [], (
        "messages not in the catalogue: run `python3 dev.py messages`"
    )
    assert sorted(kept - again) == [], "messages no longer in the code"


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_message_is_translated_and_none_is_fuzzy(language):
    po = catalogue(language)
    assert len(po) > 0
    assert [e.msgid for e in po.untranslated_entries()] == []
    assert [e.msgid for e in po.fuzzy_entries()] == []
    assert [e.msgid for e in po.obsolete_entries()] == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_translation_keeps_the_placeholders_of_its_english(language):
    wrong = []
    for entry in catalogue(language):
        translations = list(entry.msgstr_plural.values()) if entry.msgid_plural else [entry.msgstr]
        english = sorted(PLACEHOLDER.findall(entry.msgid_plural or entry.msgid))
        for text in translations:
            found = sorted(PLACEHOLDER.findall(text))
            # A singular may say "one" for its count; every other placeholder stays.
            if found != english and sorted(set(found) | {"%(count)s"}) != sorted(set(english)):
                wrong.append((entry.msgid, text))
    assert wrong == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_msgfmt_finds_the_catalogue_sound(language, tmp_path):
    path = ROOT / "locale" / language / "LC_MESSAGES" / "django.po"
    subprocess.run(
        ["msgfmt", "--check", "-o", str(tmp_path / "django.mo"), str(path)],
        check=True,
        capture_output=True,
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_compiled_catalogue_says_what_its_source_says(language):
    mo = polib.mofile(str(ROOT / "locale" / language / "LC_MESSAGES" / "django.mo"))
    compiled = {key(e): (e.msgstr, dict(e.msgstr_plural)) for e in mo if e.msgid}
    source = {
        key(e): (e.msgstr, {int(k): v for k, v in e.msgstr_plural.items()})
        for e in catalogue(language)
        if e.translated() and not e.obsolete
    }
    compiled = {k: (s, {int(n): v for n, v in p.items()}) for k, (s, p) in compiled.items()}
    assert compiled == source, "run `python3 dev.py messages` to compile the catalogues"


def test_the_site_reads_the_catalogues_it_ships():
    assert settings.LOCALE_PATHS == [ROOT / "locale"]
    assert {code for code, _ in settings.LANGUAGES} == {"en-gb", *LANGUAGES}
