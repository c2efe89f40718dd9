"""shoectl demo --web: the scoreboard page served beside a demo shoe, from its journal."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from urllib.error import URLError
from urllib.request import urlopen

from support.shoectl import ShoectlRunner

URL_LINE = re.compile(r"scoreboard on (http://127\.0\.0\.1:\d+/)")


def test_demo_serves_the_board_of_the_shoe_it_deals() -> None:
    command = [sys.executable, "-m", "cardshoe.controller.cli", "demo", "--json"]
    command += ["--decks", "1", "--rounds", "6", "--speed", "0.02", "--seed", "3"]
    command += ["--web", "127.0.0.1:0"]
    demo = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert demo.stderr is not None and demo.stdout is not None
        found = URL_LINE.search(demo.stderr.readline())
        assert found, "the demo names the page's URL first"
        boards = []
        deadline = time.monotonic() + 60
        while demo.poll() is None and time.monotonic() < deadline:
            try:
                with urlopen(found.group(1) + "board.json", timeout=5) as response:
                    boards.append(json.loads(response.read()))
            except URLError:
                break  # the demo has ended and its page with it
            time.sleep(0.05)
        lines = [json.loads(line) for line in demo.stdout]
    finally:
        demo.kill()
        demo.wait()
    started = next(line for line in lines if line["event"] == "shoe_started")
    settled = [line for line in lines if line["event"] == "round" and line["winner"]]
    shown = [board for board in boards if board["shoe_id"] == started["shoe_id"]]
    assert shown, "the page showed the demo's shoe while it was dealt"
    rounds = [board["rounds"] for board in shown]
    assert rounds == sorted(rounds) and rounds[-1] <= len(settled)
    assert [cell["winner"] for cell in shown[-1]["bead"]] == [
        line["winner"] for line in settled[: rounds[-1]]
    ]


def test_demo_with_a_bad_web_address_deals_nothing(shoectl: ShoectlRunner) -> None:
    result = shoectl("demo", "--decks", "1", "--web", "127.0.0.1")
    assert result.returncode == 2
    assert result.stderr.startswith("shoectl: error: --web '127.0.0.1' is not HOST:PORT")
    assert result.stdout == ""
