"""The command words of a move in German and Italian (docs/glossary.md section 2): one
table per language, from the English word of `engine.notation` to the word the site shows
first and the other forms it also accepts. The engine reads English only, so a reply or
the move field is turned into English before `parse_move` (`to_english`), and the
examples the site shows are turned into the reader's words (`to_reader`). Cells and edges
(F7, F7/F8) and numbers stay as they are.

Every language's words are read, whatever the reader's language: no word of one table is
a word of another or an English command or keyword (tests/site/test_command_words.py), so
nothing can mean two things, and a player who changed their language after an email was
sent, or who writes in the language of the emails they got, is still understood.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

from django.utils.translation import get_language

Table = Mapping[str, tuple[str, ...]]

# The commands: English (as `engine.notation` reads it) -> (shown, also accepted...).
COMMANDS: dict[str, Table] = {
    "de": {
        "place": ("setzen", "setze", "aufstellen"),
        "decide": ("entscheiden", "entscheide", "wählen"),
        "offer": ("anbieten", "angebot"),
        "accept": ("annehmen", "angenommen"),
        "break off": ("abbrechen",),
        "break alliance": ("aufheben",),
        "bid": ("bieten", "biete", "gebot"),
        "walls": ("grenzen",),
        "wall": ("grenze",),
        "knight": ("ritter",),
        "knights": ("ritter",),
        "expand": ("erweitern", "erweitere"),
        "pile": ("stapel",),
        "look": ("ansehen",),
        "take": ("nehmen", "nimm", "aussuchen"),
        "pass": ("passen", "passe"),
        "decline": ("verzichten", "verzichte"),
        "skip": ("aussetzen",),
    },
    "it": {
        "place": ("piazza", "piazzo", "piazzare"),
        "decide": ("decidi", "decido", "decidere", "scelgo"),
        "offer": ("offri", "offro", "offerta"),
        "accept": ("accetta", "accetto"),
        "break off": ("rifiuta", "rifiuto"),
        "break alliance": ("sciogli", "sciolgo", "sciogliere"),
        "bid": ("punta", "puntata", "puntare"),
        "walls": ("confini",),
        "wall": ("confine",),
        "knight": ("cavaliere",),
        "knights": ("cavalieri",),
        "expand": ("allarga", "allargo", "allargare"),
        "pile": ("mazzo",),
        "look": ("sfoglia", "sfoglio"),
        "take": ("prendi", "pesca"),
        "pass": ("passo", "passa"),
        "decline": ("rinuncio", "rinuncia"),
        "skip": ("salto", "salta"),
    },
}
# The keywords inside a move, and the politics cards' names after `take`.
KEYWORDS: dict[str, Table] = {
    "de": {
        "alliance": ("bündnis", "bündniszwang"),
        "renegade": ("überläufer",),
        "treasure": ("dukatenschatz", "schatz"),
        "from": ("von",),
        "parchment": ("lehen",),
    },
    "it": {
        "alliance": ("alleanza",),
        "renegade": ("disertore",),
        "treasure": ("tesoro",),
        "from": ("da",),
        "parchment": ("mezzadria",),
    },
}
# The card's own name, where it is not the keyword's (`take alliance`: the Bündniszwang).
CARDS: dict[str, dict[str, str]] = {"de": {"alliance": "bündniszwang"}, "it": {}}
# "alleanza forzata", the Italian card's whole name: the second word is read and dropped.
_CARD_TAILS = {"alliance": frozenset({"forzata"})}
# The words of a message to the table (games.mail.replies): `say`, `to <colour>:`, everyone.
TALK: dict[str, Table] = {
    "de": {"say": ("nachricht", "sage"), "to": ("an",), "everyone": ("alle",)},
    "it": {"say": ("messaggio", "dico"), "to": ("a", "per"), "everyone": ("tutti",)},
}
# The words of a vote on the table's proposal (games.votes, by a reply): `vote yes`,
# `vote no`. Italian says "no" as English does: English words are read in every language.
VOTE: dict[str, Table] = {
    "de": {"vote": ("stimme", "abstimmen"), "yes": ("ja",), "no": ("nein",)},
    "it": {"vote": ("voto", "voti", "votare"), "yes": ("sì", "si")},
}
COLOURS: dict[str, dict[str, str]] = {
    "de": {"red": "rot", "ochre": "ocker", "lilac": "lila", "grey": "grau"},
    "it": {"red": "rosso", "ochre": "ocra", "lilac": "lilla", "grey": "grigio"},
}
LANGUAGES = tuple(COMMANDS)

_UMLAUTS = {"ä": ("ae", "a"), "ö": ("oe", "o"), "ü": ("ue", "u")}


def spellings(word: str) -> set[str]:
    """A word as it may be typed: umlauts as ü, ue or u (all the same way), ß as ss."""
    word = word.replace("ß", "ss")
    return {
        word,
        *("".join(_UMLAUTS[c][i] if c in _UMLAUTS else c for c in word) for i in range(2)),
    }


def fold(word: str) -> str:
    """The form a typed word is looked up in: lower case, composed, ß as ss."""
    return unicodedata.normalize("NFC", word).lower().replace("ß", "ss")


def _reading(*tables: dict[str, Table]) -> dict[str, str]:
    found: dict[str, str] = {}
    for table in tables:
        for language in LANGUAGES:
            for english, words in table[language].items():
                for word in words:
                    for spelling in spellings(word):
                        found.setdefault(spelling, english)
    return found


_COMMAND_OF = _reading(COMMANDS)
_KEYWORD_OF = _reading(KEYWORDS)
_WORD_OF = {**_KEYWORD_OF, **_COMMAND_OF}
_TALK_OF = _reading(TALK)
SAY_WORDS = frozenset(word for word, english in _TALK_OF.items() if english == "say")
TO_WORDS = frozenset(word for word, english in _TALK_OF.items() if english == "to")
EVERYONE_WORDS = frozenset(word for word, english in _TALK_OF.items() if english == "everyone")
COLOUR_OF = {word: english for language in LANGUAGES for english, word in COLOURS[language].items()}
_VOTE_OF = _reading(VOTE)
VOTE_WORDS = frozenset({"vote", *(w for w, english in _VOTE_OF.items() if english == "vote")})
YES_WORDS = frozenset({"yes", *(w for w, english in _VOTE_OF.items() if english == "yes")})
NO_WORDS = frozenset({"no", *(w for w, english in _VOTE_OF.items() if english == "no")})

_WORD = re.compile(r"[^\s,]+")


def english_word(word: str) -> str:
    """The English command or keyword a word (of any language, any case) stands for: the
    first word of it ("aufheben" is `break alliance`: "break"); the word folded if it is
    none."""
    folded = fold(word)
    return _WORD_OF.get(folded, folded).partition(" ")[0]


def to_english(text: str) -> str:
    """A move in any language's words as `engine.notation` reads it: each word that is a
    command or keyword in German or Italian replaced by the English one; the rest (cells,
    numbers, English words, separators) as typed."""
    state = {"previous": ""}

    def english(found: re.Match[str]) -> str:
        word = fold(found.group())
        previous = state["previous"]
        if word in _CARD_TAILS.get(previous, ()):
            return ""
        meaning = _WORD_OF.get(word)
        if meaning is None:
            state["previous"] = word
            return found.group()
        if previous == "break alliance" and meaning == "alliance":
            meaning = ""  # "aufheben bündnis C3 H5", "sciogli alleanza C3 H5"
        state["previous"] = meaning
        return meaning

    return _WORD.sub(english, text)


def to_reader(text: str, language: str | None = None) -> str:
    """An English move (as the site writes its examples) in the words the reader sees
    first: the active language's, or English if it has no table. Cells stay."""
    language = (language or get_language() or "").split("-")[0]
    if language not in COMMANDS:
        return text
    commands, keywords = COMMANDS[language], KEYWORDS[language]
    words = text.split(" ")
    head = words[0].lower()
    if head == "break" and len(words) > 1 and words[1].lower() in ("off", "alliance"):
        return " ".join([commands[f"break {words[1].lower()}"][0], *words[2:]])
    if head == "break":
        return " ".join([commands["break off"][0], *words[1:]])
    shown = []
    for at, word in enumerate(words):
        key, tail = word.lower().rstrip(","), word[len(word.rstrip(",")) :]
        if key in commands and (at == 0 or key in ("knight", "knights", "expand")):
            shown.append(commands[key][0] + tail)
        elif key in keywords and at > 0:
            card = CARDS[language].get(key) if head == "take" else None
            shown.append((card or keywords[key][0]) + tail)
        else:
            shown.append(word)
    return " ".join(shown)


def listed_to_reader(listed: str, kind: str, language: str | None = None) -> str:
    """A refusal's list of English words (engine.notation: "place, decide, ...") in the
    reader's words: `kind` "commands" lists commands, "names" the politics cards after
    `take` ("alliance, renegade, treasure 8, ...", read as `take` reads them)."""
    if kind == "names":
        shown = (
            to_reader(f"take {item}", language).split(" ", 1)[1] for item in listed.split(", ")
        )
    else:
        shown = (to_reader(item, language) for item in listed.split(", "))
    return ", ".join(shown)


def talk_to_reader(english: str, language: str | None = None) -> str:
    """`say`, `to`, `everyone` or a colour in the reader's words (the first form)."""
    language = (language or get_language() or "").split("-")[0]
    if language not in TALK:
        return english
    if english in COLOURS[language]:
        return COLOURS[language][english]
    return TALK[language][english][0]


def vote_to_reader(yes: bool, language: str | None = None) -> str:
    """`vote yes` or `vote no` in the reader's words (the first forms; English where a
    language says it as English does)."""
    language = (language or get_language() or "").split("-")[0]
    table = VOTE.get(language, {})
    answer = "yes" if yes else "no"
    return f"{table.get('vote', ('vote',))[0]} {table.get(answer, (answer,))[0]}"
