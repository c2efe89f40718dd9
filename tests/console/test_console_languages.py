"""The console's languages: gettext catalogs a translator edits, compiled into what the package
ships, complete for every word the code marks, and chosen by the table's [console] language;
the page's roads keep 莊/閒/和 whatever the language."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from playwright.sync_api import Browser
from support.console_support import with_console
from support.service_support import running_service, simulated_table
from support.tmux_support import tmux_running
from support.web_support import WebService

from cardshoe.controller.config import ConsoleLanguage
from cardshoe.controller.scoreboard.notices import MISREAD
from cardshoe.controller.service.console_words import CATALOG_OF, notice_line, translator

REPO = Path(__file__).resolve().parents[2]
LOCALE = REPO / "controller" / "locale"
KEYWORDS = {"N_": None, "tr": None, "Words": (1,)}
"""As `make catalogs` extracts them (-k N_ -k tr -k Words:1)."""


def marked_words() -> set[str]:
    found = extract_from_dir(
        str(REPO / "controller"),
        method_map=[("**.py", "python")],
        keywords=KEYWORDS,
        comment_tags=(),
    )
    return {message if isinstance(message, str) else message[0] for _, _, message, _, _ in found}


@pytest.mark.parametrize("catalog", sorted(CATALOG_OF.values()))
def test_each_catalog_translates_every_marked_word_and_ships_compiled(catalog: str) -> None:
    folder = LOCALE / catalog / "LC_MESSAGES"
    with (folder / "cardshoe.po").open("rb") as source:
        messages = read_po(source, locale=catalog)
    translated = {message.id: message.string for message in messages if message.id}
    untranslated = sorted(word for word in marked_words() if not translated.get(word))
    assert untranslated == [], f"run 'make catalogs' and translate these in {catalog}"
    compiled = io.BytesIO()
    write_mo(compiled, messages)
    assert (folder / "cardshoe.mo").read_bytes() == compiled.getvalue(), (
        f"{catalog}'s .mo is not its .po compiled: run 'make catalogs'"
    )


def test_the_holds_speak_each_language_from_the_notices_table() -> None:
    assert notice_line(MISREAD, ConsoleLanguage.EN) == "A card could not be read"
    assert notice_line(MISREAD, ConsoleLanguage.ZH_HANT) == MISREAD.zh == "有一張牌無法讀取"
    assert notice_line(MISREAD, ConsoleLanguage.ZH_HANS) == "有一张牌无法读取"
    assert translator(ConsoleLanguage.ZH_HANS)("no more bets") == "停止下注"
    assert translator(ConsoleLanguage.EN)("no more bets") == "no more bets"


def test_the_terminal_and_the_page_speak_the_tables_language(
    tmp_path: Path, browser: Browser
) -> None:
    with simulated_table(tmp_path, decks=1) as table:
        with_console(table)
        table.config_path.write_text(
            table.config_path.read_text() + '[console]\nlanguage = "zh-Hant"\n'
        )
        with (
            running_service(table, betting_time=None) as service,
            WebService(table.journal_path, "--config", str(table.config_path), "--console") as web,
        ):
            service.wait_for_notification("READY=1")
            page = browser.new_page(viewport={"width": 1024, "height": 600})
            try:
                page.goto(web.url + "console")
                page.get_by_text("未有人登入：請按「登入」").wait_for()
                page.get_by_role("button", name="登入", exact=True).wait_for()
                roads = page.locator(".road-title").all_inner_texts()
                assert roads[:2] == ["珠盤路 Bead road", "大路 Big road"]
            finally:
                page.close()
            table.config_path.write_text(
                table.config_path.read_text().replace('"zh-Hant"', '"zh-Hans"')
            )
            console = [sys.executable, "-m", "cardshoe.controller.cli", "console"]
            with tmux_running(tmp_path, [*console, "--config", str(table.config_path)]) as shown:
                shown.wait_for("未有人登入：请按 i，然后输入姓名及密码", " i  登入")
            assert service.stop() == 0


def test_an_unknown_language_is_refused_in_one_line(tmp_path: Path, shoectl) -> None:
    with simulated_table(tmp_path, decks=1) as table:
        table.config_path.write_text(table.config_path.read_text() + '[console]\nlanguage = "fr"\n')
        done = shoectl(
            "console", "pin", "set", "ann", "--role", "dealer", "--config", str(table.config_path)
        )
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        'console.language = "fr" is not allowed: use "en" | "zh-Hant" | "zh-Hans"'
    )
