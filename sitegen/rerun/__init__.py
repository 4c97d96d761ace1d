"""`sitegen rerun`: controlled reruns of an operation's implementations on a GPU.

Rooms, in the order a rerun passes through them:
    plan/      what to measure, and which code  measure/   one measuring process: clock, passes,
    sweep      the parent: plan, run the                   samples, the GPU's state
               measuring processes, assemble    checks/    gate, timed outputs, guards
    fleet/     the same across a Ray cluster    outcome/   results → outcomes → registry documents
    selftest/  planted cheats, each refused

The click command is sitegen.cli.rerun; the published constants, statistics and integrity rules it
applies are in sitegen.rules. A feature: may import the layers below the features, never site,
importers, trust or gate; imports no pydantic (GPU hosts run it without).
"""
