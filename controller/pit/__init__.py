"""The pit: the floor's live web page and JSON API for supervisors and surveillance."""
