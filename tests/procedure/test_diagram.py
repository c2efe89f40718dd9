"""docs/state-diagram.md is generated from the procedure tables and must match them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cardshoe.controller.procedure.diagram import CROSS_CUTTING, flow_mermaid, render
from cardshoe.controller.procedure.machine import TRANSITIONS, State

PAGE = Path(__file__).resolve().parents[2] / "docs" / "state-diagram.md"


def test_the_committed_state_diagram_is_what_the_tables_generate() -> None:
    assert PAGE.read_text(encoding="utf-8") == render(), (
        "docs/state-diagram.md is out of date: run "
        "'python -m cardshoe.controller.procedure.diagram > docs/state-diagram.md'"
    )


def test_the_module_prints_the_page() -> None:
    printed = subprocess.run(
        [sys.executable, "-m", "cardshoe.controller.procedure.diagram"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert printed == render()


def test_the_flow_diagram_draws_every_state_changing_transition_of_the_round() -> None:
    mermaid = flow_mermaid()
    assert mermaid.splitlines()[3] == "stateDiagram-v2"
    for transition in TRANSITIONS:
        if transition.dest in (State.HELD, State.FAULT) or transition.dest is None:
            continue
        if transition.trigger in CROSS_CUTTING:
            continue
        sources = (
            (transition.source,) if isinstance(transition.source, State) else transition.source
        )
        for source in sources:
            edges = [
                line for line in mermaid.splitlines() if line.strip().startswith(f"{source} --> ")
            ]
            assert any(
                f"{source} --> {transition.dest}:" in edge and transition.trigger in edge
                for edge in edges
            ), (source, transition.trigger, transition.dest)
