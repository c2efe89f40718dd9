"""docs/state-diagram.md, generated from the procedure's own tables.

Run `python -m cardshoe.controller.procedure.diagram > docs/state-diagram.md` after
changing machine.py; tests/procedure/test_diagram.py fails while the committed page
differs from what this prints. The flow diagram is drawn by transitions'
GraphMachine (mermaid engine) from the same transition tables the Machine
runs; the transitions every state shares (holds, fault, abandon, cards and
reports that change no state) would hide the flow, so they are listed in a
table instead of drawn.
"""

from __future__ import annotations

import sys
from typing import Any

from transitions.extensions import GraphMachine

from cardshoe.controller.procedure.corrections import CORRECTIONS, VOID_REASONS
from cardshoe.controller.procedure.irregularities import IRREGULARITIES
from cardshoe.controller.procedure.machine import (
    AUTOMATIC,
    TRANSITIONS,
    State,
    Transition,
    Trigger,
    machine_options,
)

CROSS_CUTTING = frozenset({Trigger.HOLD, Trigger.RESUME, Trigger.FAIL, Trigger.ABANDON_SHOE})
"""Triggers that lead out of (nearly) every state; tabulated, not drawn."""

_HEADER = """\
# The dealing procedure

Generated from `controller/procedure/machine.py` by
`python -m cardshoe.controller.procedure.diagram`; do not
edit by hand (`tests/procedure/test_diagram.py` fails when this page is out of date).

Automatic transitions ({automatic}) are fired by the procedure itself as soon as their guard
holds. Every other trigger is an input: a device event or an operator command. An input that
no transition allows in the current state is a procedure violation: it is journaled, raises
an alarm, and changes nothing.

## Shoe and round flow

"""


class _DrawingModel:
    """The diagram needs a model to bind triggers to; nothing is ever run on it."""


def _is_drawn(transition: Transition) -> bool:
    return transition.dest is not None and transition.trigger not in CROSS_CUTTING


def flow_mermaid() -> str:
    """The mermaid state diagram of every state-changing transition but the cross-cutting ones."""
    options = machine_options(_DrawingModel(), bind=False)
    options["transitions"] = [t.as_dict() for t in TRANSITIONS if _is_drawn(t)]
    options["states"] = [s.value for s in State if s not in (State.HELD, State.FAULT)]
    for callback in ("on_exception", "finalize_event"):
        options.pop(callback)
    # transitions writes the title as mermaid's front matter, which is YAML: give it a key.
    machine = GraphMachine(
        graph_engine="mermaid",
        show_conditions=True,
        title="title: cardshoe dealing procedure",
        **options,
    )
    drawn: Any = machine.model  # GraphMachine adds get_graph() to the model at run time
    return str(drawn.get_graph().draw(None)).rstrip() + "\n"


def _sources(transition: Transition) -> str:
    sources = (transition.source,) if isinstance(transition.source, State) else transition.source
    if set(sources) >= {s for s in State if s not in (State.HELD, State.FAULT)}:
        return "every state but " + ", ".join(f"`{s}`" for s in State if s not in sources)
    return ", ".join(f"`{s}`" for s in sources)


def _table(rows: list[Transition]) -> str:
    lines = ["| trigger | from | to | guard | action |", "|---|---|---|---|---|"]
    for t in rows:
        guards = [*t.conditions, *(f"not {name}" for name in t.unless)]
        lines.append(
            f"| `{t.trigger}` | {_sources(t)} | "
            f"{'(stays)' if t.dest is None else f'`{t.dest}`'} | "
            f"{', '.join(guards) or '—'} | {', '.join((*t.before, *t.after)) or '—'} |"
        )
    return "\n".join(lines) + "\n"


def _irregularities() -> str:
    lines = [
        "| reason code | in a round being dealt | alarm | source | meaning |",
        "|---|---|---|---|---|",
    ]
    for code, rule in IRREGULARITIES.items():
        lines.append(
            f"| `{code}` | {rule.consequence} | {rule.alarm or '—'} | {rule.source} | "
            f"{rule.meaning} |"
        )
    return "\n".join(lines) + "\n"


def corrections_markdown() -> str:
    """docs/procedure.md's correct/void table (Art. 10), from corrections.CORRECTIONS."""
    lines = [
        "| irregularity | when | device knows the order | remedy | how | rule |",
        "|---|---|---|---|---|---|",
    ]
    for (code, when, known), row in CORRECTIONS.items():
        lines.append(
            f"| `{code}` | {when} | {'yes' if known else 'no'} | {row.remedy} | {row.how} | "
            f"{row.rule} |"
        )
    return "\n".join(lines) + "\n"


def void_reasons_markdown() -> str:
    """docs/procedure.md's table of the reasons a supervisor may void a round for."""
    lines = ["| `void-round --reason` | meaning | rule | games |", "|---|---|---|---|"]
    for reason, rule in VOID_REASONS.items():
        games = ", ".join(f"`{game}`" for game in rule.games)
        lines.append(f"| `{reason}` | {rule.meaning} | {rule.rule} | {games} |")
    return "\n".join(lines) + "\n"


def render() -> str:
    """The whole page."""
    automatic = ", ".join(f"`{trigger}`" for trigger in AUTOMATIC)
    cross = [t for t in TRANSITIONS if t.trigger in CROSS_CUTTING]
    resume = [t for t in cross if t.trigger is Trigger.RESUME]
    cross = [t for t in cross if t.trigger is not Trigger.RESUME]
    internal = [t for t in TRANSITIONS if t.dest is None and t.trigger not in CROSS_CUTTING]
    return (
        _HEADER.format(automatic=automatic)
        + "```mermaid\n"
        + flow_mermaid()
        + "```\n\n## Holds, fault and abandoning a shoe\n\n"
        + "A hold takes the procedure to `held` from wherever it is and remembers that state; "
        + "when the last hold ends, `resume` returns to exactly that state "
        + f"({len(resume)} transitions `held` → state, guarded by `no_hold_left` and "
        + "`was_held_in_destination`).\n\n"
        + _table(cross)
        + "\n## Inputs that change no state\n\n"
        + "Cards, the cut card and the other reports act on the shoe and round without "
        + "a state change of their own; what they cause follows through the automatic "
        + "transitions.\n\n"
        + _table(internal)
        + "\n## Irregularities\n\n"
        + "From `controller/procedure/irregularities.py`. A card that no hand is due "
        + "(no round being dealt) is burned instead, and only a `record` irregularity keeps "
        + "its card in play; "
        + "a void round settles nothing and earlier results stand.\n\n"
        + _irregularities()
    )


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
