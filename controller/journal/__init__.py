"""The durable, hash-chained record of everything the table did; the truth every observer reads."""
