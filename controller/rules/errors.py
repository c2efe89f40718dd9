"""The rules engine's own error: an input the rule texts do not allow.

The rules import nothing of the table's machinery, so they cannot raise the
controller's UserError; whoever calls them with a person's input (shoectl,
the control socket) reports a RulesError on one line as bad input.
"""


class RulesError(ValueError):
    """A card, shoe, game, option or bet that the rules cannot take; the message says why."""


class CardNotationError(RulesError):
    """A card or card list that cannot be read."""
