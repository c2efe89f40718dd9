import pytest
from hypothesis import given
from hypothesis import strategies as st

from cardshoe.controller.rules.cards import (
    MANDATORY_SEVEN,
    Card,
    ShoeComposition,
    Suit,
    parse_card,
    parse_cards,
)
from cardshoe.controller.rules.errors import CardNotationError


@pytest.mark.parametrize(
    ("text", "rank", "suit", "value"),
    [
        ("AS", 1, Suit.SPADES, 1),
        ("TD", 10, Suit.DIAMONDS, 0),
        ("10d", 10, Suit.DIAMONDS, 0),
        ("7H", 7, Suit.HEARTS, 7),
        ("9c", 9, Suit.CLUBS, 9),
        ("JS", 11, Suit.SPADES, 0),
        ("QH", 12, Suit.HEARTS, 0),
        ("KC", 13, Suit.CLUBS, 0),
    ],
)
def test_parse_card(text: str, rank: int, suit: Suit, value: int) -> None:
    card = parse_card(text)
    assert card == Card(rank, suit)
    assert card.value == value


@pytest.mark.parametrize("bad", ["", "1S", "11H", "AX", "ZZ", "A", "ASS", "0D"])
def test_bad_card_is_one_line_error(bad: str) -> None:
    with pytest.raises(CardNotationError) as caught:
        parse_card(bad)
    assert "\n" not in str(caught.value)
    assert "S H D C" in str(caught.value)


@given(st.builds(Card, st.integers(1, 13), st.sampled_from(Suit)))
def test_notation_round_trip(card: Card) -> None:
    assert parse_card(str(card)) == card


def test_parse_cards_accepts_spaces_and_commas() -> None:
    assert [str(c) for c in parse_cards("AS, 7H  TD,10C")] == ["AS", "7H", "TD", "TC"]


def test_mandatory_seven_is_not_a_shoe_card() -> None:
    assert str(MANDATORY_SEVEN) == "7*"
    assert MANDATORY_SEVEN.value == 7
    with pytest.raises(CardNotationError):
        parse_cards("AS 7*")


def test_shoe_composition() -> None:
    shoe = ShoeComposition(8)
    assert shoe.size == 416
    assert sum(shoe.value_counts()) == 416
    assert shoe.value_counts()[0] == 128
    cards = list(shoe.cards())
    assert len(cards) == 416
    assert cards.count(Card(1, Suit.SPADES)) == shoe.copies_per_card == 8
