"""The table display: a board kept from the table's events, drawn live or as plain lines.

scoreboard.board.TableBoard holds what a display shows and takes events in journal form
(kind, payload) or whole as a JSON snapshot; rich_view draws it on a terminal
(rich.live); plain prints one line per event off a terminal. shoectl demo and
shoectl monitor --table both use it.
"""
