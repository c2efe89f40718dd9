"""A simulated dealing shoe and automatic shuffler-dealer speaking the shoe link protocol."""
