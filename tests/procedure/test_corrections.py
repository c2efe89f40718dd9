"""Art. 10 corrections: the correct/void table, the supervisor's void, an ordered double feed."""

from __future__ import annotations

from pathlib import Path

from support.table_inputs import MANUAL, Table, ids

from cardshoe.controller.procedure.corrections import (
    CORRECTIONS,
    VOID_REASONS,
    Remedy,
    VoidReason,
    When,
)
from cardshoe.controller.procedure.diagram import corrections_markdown, void_reasons_markdown
from cardshoe.controller.procedure.facts import (
    Burned,
    CardAssigned,
    IrregularityFound,
    RefusedCommand,
    RoundResult,
    RoundVoided,
)
from cardshoe.controller.procedure.irregularities import (
    IRREGULARITIES,
    Consequence,
    Irregularity,
)
from cardshoe.controller.procedure.machine import State
from cardshoe.controller.procedure.operator_commands import CloseBets, VoidRound
from cardshoe.drivers.api.events import ReadFlag


def betting() -> Table:
    table = Table(MANUAL)
    table.open_manual_shoe()
    table.draw(ids("2C", deck=8))
    assert table.state == State.BETTING
    return table


def test_every_row_cites_a_rule_and_agrees_with_what_the_procedure_does() -> None:
    for (code, when, order_known), row in CORRECTIONS.items():
        assert row.rule and row.how
        if when is When.BURN:
            assert row.remedy is Remedy.CORRECT
        elif code is Irregularity.DOUBLE_FEED and order_known:
            assert IRREGULARITIES[Irregularity.DOUBLE_FEED_IN_ORDER].consequence is (
                Consequence.RECORD
            )
        else:
            voids = IRREGULARITIES[code].consequence is Consequence.VOID_ROUND
            assert voids == (row.remedy is Remedy.VOID), code
    assert all(rule.rule for rule in VOID_REASONS.values())


def test_a_supervisor_voids_the_round_under_way_with_a_reason_of_the_table() -> None:
    table = betting()
    table.feed(CloseBets())
    table.draw(ids("2S 7H"))
    facts = table.feed(VoidRound(VoidReason.MISDEAL, "a card flew off the table"))
    assert [(v.round_no, v.reason) for v in table.events(RoundVoided)] == [(1, "misdeal")]
    assert not [f for f in facts if isinstance(f.event, RefusedCommand)]
    assert table.state == State.BETTING and table.model.round_no == 2


def test_a_void_without_a_reason_of_the_table_or_without_a_round_is_refused() -> None:
    table = betting()
    (fact,) = table.feed(VoidRound("the dealer sneezed"))
    assert isinstance(fact.event, RefusedCommand)
    assert fact.event.reason.startswith("void-round 'the dealer sneezed' is not a reason")
    assert "misdeal (Macau Art. 10" in fact.event.reason
    table.feed(VoidRound(VoidReason.MISDEAL))
    table.feed(CloseBets())
    table.draw(ids("2S 7H 3S KH 9D"))
    assert table.state == State.BETTING
    settled = len(table.events(RoundResult))
    idle = Table(MANUAL)
    (refused,) = idle.feed(VoidRound(VoidReason.MISDEAL))
    assert refused.event.reason.startswith("void-round is not possible now: no shoe is open")
    assert settled == 1


def test_a_double_feed_the_reader_read_in_order_is_corrected_not_void() -> None:
    """7 Up 5.4 voids only when the order cannot be established."""
    table = betting()
    table.feed(CloseBets())
    flags = ReadFlag.DOUBLE_FEED_SUSPECTED | ReadFlag.FEED_IN_ORDER
    group = [
        table.device.card(card, flags=flags, feed_group=3, feed_size=2) for card in ids("2S 7H")
    ]
    table.feed(*group)
    table.draw(ids("3S KH 9D"))
    assert not table.events(RoundVoided)
    assert [a.to.value for a in table.events(CardAssigned)][:2] == ["player", "banker"]
    assert len(table.events(RoundResult)) == 1
    found = [(f.code, f.consequence) for f in table.events(IrregularityFound)]
    assert found == [("double_feed_in_order", "record")] * 2


def test_no_card_is_asked_for_and_no_round_ends_before_an_ordered_group_is_complete() -> None:
    """An automatic machine's DEAL_NEXT sent between the group's cards would deal a card
    more; a round completed by the group's first card must wait for its second."""
    table = betting()
    table.feed(CloseBets())
    table.draw(ids("2S 7H 3S KH"))
    flags = ReadFlag.DOUBLE_FEED_SUSPECTED | ReadFlag.FEED_IN_ORDER
    first, second = (
        table.device.card(card, flags=flags, feed_group=4, feed_size=2) for card in ids("9D 5C")
    )
    table.feed(first)
    assert table.model.card_due() is None and not table.events(RoundResult)
    table.feed(second)
    (result,) = table.events(RoundResult)
    assert result.player_total == 4 and result.banker_total == 7
    assert table.events(Burned)[-1].reason == "irregular"
    assert table.state == State.BETTING and table.model.round_no == 2


def test_docs_procedure_md_holds_the_tables_as_the_code_has_them() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "procedure.md").read_text()
    assert corrections_markdown() in page
    assert void_reasons_markdown() in page
