"""Settings in YAML text: nested mappings flattened to dotted keys, within bounds.

Launchers' config files and YAML text written inside a script (a literal handed to
``yaml.safe_load``) are read the same way: with :func:`yaml.safe_load` only, never a loader that
builds objects.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_FLATTENED = 100_000
"""Mappings and values visited when flattening one config."""
MAX_EMBEDDED_YAML = 64 * 1024
"""Most characters of YAML text written in a script that are parsed (a config is a few kilobytes)."""


def flatten_keys(data: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Flatten nested mappings to ``(dotted.key, value)`` pairs (bounded by the file size).

    YAML anchors let a mapping hold itself (``&a {x: *a}``) or be shared many times over: a mapping
    inside itself is not entered again, and at most :data:`MAX_FLATTENED` entries are visited in all.
    """
    pairs: list[tuple[str, Any]] = []
    pending: list[tuple[str, Any, frozenset[int]]] = [(prefix, data, frozenset())]
    visited = 0
    while pending and visited < MAX_FLATTENED:
        visited += 1
        key, value, around = pending.pop()
        if isinstance(value, dict):
            if id(value) in around:
                continue  # (a mapping holding itself through an alias: no end to its keys)
            inside = around | {id(value)}
            pending.extend((f"{key}.{k}" if key else str(k), v, inside) for k, v in value.items())
        else:
            pairs.append((key, value))
    return pairs


def string_settings(text: str) -> list[tuple[str, str]]:
    """Return the ``(dotted.key, value)`` pairs of a YAML mapping's string values; none if it is no mapping.

    Text longer than :data:`MAX_EMBEDDED_YAML`, or that is not valid YAML, gives none.
    """
    if len(text) > MAX_EMBEDDED_YAML or ":" not in text:
        return []
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError, ValueError):
        return []
    if not isinstance(data, dict):
        return []
    return [(key, value) for key, value in flatten_keys(data) if isinstance(value, str)]
