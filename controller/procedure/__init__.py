"""The dealing procedure: the transitions machine, the table model it drives and the facts it emits."""
