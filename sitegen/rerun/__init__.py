"""`sitegen rerun`: controlled reruns of an operation's implementations on a GPU.

Rooms, in the order a rerun passes through them:
    commands   the click command (thin)         plan/      what to measure, and which code
    sweep      the parent: plan, run the        measure/   one measuring process: clock, passes,
               measuring processes, assemble               samples, the GPU's state
    protocol   the published constants          checks/    gate, timed outputs, guards, integrity
    fleet/     the same across a Ray cluster    outcome/   results → outcomes → registry documents
    selftest/  planted cheats, each refused
"""
