"""The game rules as pure functions: cards, drawing, outcomes, settlement and exact odds.

Nothing here knows a device, a journal or a clock, so the rule texts can be checked
against published tables without any of the table's machinery.
"""
