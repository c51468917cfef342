"""Collectors: one per foreign run format, each turning a run folder into a :class:`RunRecord`.

Collectors read untrusted folders: they never execute, import or unpickle anything found there, never
follow a symlink out of the run folder, and turn every bad input into a Problem rather than a crash.
"""
