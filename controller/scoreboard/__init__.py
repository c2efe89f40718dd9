"""Pure projections of the table's events (board, roads, event lines) shared by every display."""
