"""The dealing procedure: the transitions machine, the table model it drives, the facts it emits."""
