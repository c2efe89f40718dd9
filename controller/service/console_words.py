"""The table console's words in the table's language: gettext catalogs a translator edits.

The catalogs are controller/locale/<language>/LC_MESSAGES/cardshoe.po, compiled
with Babel into the .mo files the package ships (`make catalogs`, docs/console.md);
reading them needs only the standard library's gettext. A word a catalog lacks
shows in English. The holds keep the notices table's own words: English, and its
Chinese in Traditional characters, which Simplified takes from its catalog. The
roads are not words here: the page keeps their conventional 莊/閒/和 in every language.
"""

from __future__ import annotations

import gettext
from collections.abc import Callable
from functools import cache
from importlib import resources

from cardshoe.controller.config import ConsoleLanguage
from cardshoe.controller.scoreboard.notices import Words

DOMAIN = "cardshoe"
CATALOG_OF: dict[ConsoleLanguage, str] = {
    ConsoleLanguage.ZH_HANT: "zh_Hant",
    ConsoleLanguage.ZH_HANS: "zh_Hans",
}
"""Each language -> its catalog folder (gettext's locale names); English needs none."""

Translate = Callable[[str], str]


def N_(text: str) -> str:
    """Marks a word in a table for the catalogs; it is translated where it is shown."""
    return text


@cache
def translator(language: ConsoleLanguage) -> Translate:
    """The gettext function of the language's catalog (English: the words as written)."""
    catalog = CATALOG_OF.get(language)
    if catalog is None:
        return str
    folder = resources.files("cardshoe.controller").joinpath("locale")
    with resources.as_file(folder) as localedir:
        translations = gettext.translation(
            DOMAIN, localedir=str(localedir), languages=[catalog], fallback=True
        )
    return translations.gettext


def notice_line(words: Words, language: ConsoleLanguage) -> str:
    """A hold's line from the notices table, in the language."""
    if language is ConsoleLanguage.EN:
        return words.en
    if language is ConsoleLanguage.ZH_HANT:
        return words.zh
    simplified = translator(language)(words.en)
    return words.zh if simplified == words.en else simplified
