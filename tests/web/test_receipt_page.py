"""A pack receipt prints on one page with its signature lines, in a real browser."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Browser
from support.shoectl import ShoectlRunner

from cardshoe.controller.journal.store import Journal

PDF_PAGE = re.compile(rb"/Type\s*/Page(?!s)")


def test_a_demo_shoes_receipt_prints_on_one_page(
    browser: Browser, shoectl: ShoectlRunner, tmp_path: Path
) -> None:
    journal = tmp_path / "journal.sqlite"
    dealt = shoectl("demo", "--seed", "9", "--rounds", "5", "--journal", str(journal))
    assert dealt.returncode == 0, dealt.stderr
    with Journal.open_readonly(journal) as opened:
        shoe_id = next(opened.records(kinds=["shoe.started"])).shoe_id
    assert shoe_id is not None
    page_file = tmp_path / "receipt.html"
    written = shoectl(
        "journal", "receipt", str(journal), "--shoe", shoe_id, "--html", str(page_file)
    )
    assert written.returncode == 0, written.stderr
    page = browser.new_page()
    try:
        page.goto(page_file.as_uri())
        assert page.locator("h1").inner_text() == f"Pack receipt: table table-1, shoe {shoe_id}"
        assert page.locator("tr").count() >= 18
        captions = page.locator(".signature .caption").all_inner_texts()
        assert captions == ["Dealer (loaded)", "Supervisor (witnessed)", "Date and time"]
        lines = page.locator(".signature .line")
        assert all((lines.nth(n).bounding_box() or {}).get("width", 0) > 100 for n in range(3))
        for paper in ("A4", "Letter"):
            printed = page.pdf(format=paper)
            assert len(PDF_PAGE.findall(printed)) == 1, paper
    finally:
        page.close()
