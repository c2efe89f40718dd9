"""The device seam: what any device tells the table, what the table asks, and how a
protocol family is found by name. The controller's core imports devices only through here."""
