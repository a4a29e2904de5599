"""Out-of-office replies recognised by their subject, for the responders that mark them
with no header (RFC 3834's Auto-Submitted, and the others `inbound.is_automatic` knows).

Such a reply to a game's email would be read as a move and answered "no command found"
(a refusal to a holiday). A subject that starts with one of these phrases, in the
languages the players write in, is an automatic reply and is dropped unanswered. Only
the start counts: a person's reply begins with their client's "Re:" ("AW:", "R:"...),
and a responder puts its phrase first ("Automatic reply: <the subject answered>").
Accents and case do not count ("Reponse automatique" is one too).
"""

from __future__ import annotations

import re
import unicodedata
from email.header import decode_header, make_header

# By language (ISO 639-1): what responders write, and what people name their own.
SUBJECTS: dict[str, tuple[str, ...]] = {
    "en": (
        "Out of office",
        "Out of the office",
        "Automatic reply",
        "Auto-reply",
        "Autoreply",
        "Auto reply",
        "Auto response",
        "Autoresponse",
        "Away from the office",
    ),
    "de": (
        "Abwesenheitsnotiz",
        "Automatische Antwort",
        "Automatische Abwesenheitsnotiz",
        "Abwesend",
        "Abwesenheit",
        "Nicht im Büro",
        "Außer Haus",
    ),
    "it": ("Risposta automatica", "Fuori sede", "Fuori ufficio", "Assente", "Assenza"),
    "fr": (
        "Réponse automatique",
        "Absence",
        "Absent",
        "Absente",
        "Message d'absence",
        "Absent du bureau",
    ),
    "es": (
        "Respuesta automática",
        "Fuera de la oficina",
        "Fuera de oficina",
        "Ausente",
        "Ausencia",
    ),
    "nl": ("Afwezig", "Automatisch antwoord", "Niet aanwezig", "Buiten kantoor"),
    "pt": ("Resposta automática", "Fora do escritório", "Ausência"),
    "sv": ("Automatiskt svar", "Frånvaro", "Frånvarande"),
    "da": ("Automatisk svar", "Fraværende", "Ikke på kontoret"),
    "no": ("Automatisk svar", "Fraværende", "Ikke på kontoret"),
    "pl": ("Odpowiedź automatyczna", "Automatyczna odpowiedź", "Poza biurem", "Nieobecność"),
}


def _plain(text: str) -> str:
    """Lower case, without accents, one space between words: "Réponse  Automatique" →
    "reponse automatique" (some responders lose the accents, or the case)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).split())


# "<phrase>" alone, or followed by what is no letter (": ", " - ", " (", "]"); "[" or "*"
# may come before it.
_STARTS = re.compile(
    r"[\W_]*(?:"
    + "|".join(
        sorted(
            {re.escape(_plain(phrase)) for phrases in SUBJECTS.values() for phrase in phrases},
            key=len,
            reverse=True,
        )
    )
    + r")(?![^\W\d_])"
)


def is_out_of_office(subject: str) -> bool:
    """Whether an email's Subject (as in the header, RFC 2047 words decoded here) starts
    with an out-of-office phrase."""
    return _STARTS.match(_plain(decoded(subject))) is not None


def decoded(value: str) -> str:
    """A header's text with its RFC 2047 encoded words decoded ("=?utf-8?q?...?=");
    as it is, if they cannot be (a malformed header is no reason to fail)."""
    try:
        return str(make_header(decode_header(value)))
    except (ValueError, LookupError, UnicodeError):
        return value
