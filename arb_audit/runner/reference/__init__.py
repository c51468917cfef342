"""The reference world: a tiny causal language model, two tasks and their grader, on the CPU.

Real agent runs take hours on GPUs; this world takes seconds, yet its training is real (weights change,
held-out scores move), so runs recorded in it have a route and a failure known by construction. torch
is imported here and nowhere else in the runner (the ``reference`` extra installs it).
"""
