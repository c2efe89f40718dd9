"""A TableModel run by transitions' own generic trigger path: the reference its compiled
dispatch (controller/procedure/dispatch.py) must agree with, fact for fact."""

from __future__ import annotations

from functools import partial

from transitions import Machine

from cardshoe.controller.procedure.table import TableModel


def through_transitions(model: TableModel) -> TableModel:
    """`model` with every trigger, the automatic steps too, fired by Machine._get_trigger of
    transitions itself instead of the routes compiled from the same Machine."""
    generic = partial(Machine._get_trigger, model.machine, model)
    vars(model)["trigger"] = generic
    vars(model.machine)["take"] = lambda step: generic(step.trigger)
    return model
