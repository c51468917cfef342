"""Config files of the workspace pick a launcher's default route.

A script whose route a setting chooses (``if cfg.rl == "dpo"``, ``--stage`` without a default, a
framework trainer whose config key picks the algorithm) is ``CONFIG_DEPENDENT`` on its own. In its
workspace, the config it loads says what runs when the command line sets nothing:

- the YAML files it names (``OmegaConf.load("conf/train.yaml")``, ``default="configs/grpo.yaml"``),
- its Hydra config (``@hydra.main(config_path="conf", config_name="train")``), with the ``defaults:``
  list followed (``- algorithm: grpo`` reads ``conf/algorithm/grpo.yaml`` under ``algorithm``),
- when it names none, the workspace's YAML files that set the key, provided they all agree.

The setting is the dispatch finding's ``key``. Only :func:`yaml.safe_load` reads config, within
:data:`MAX_FILES` files of :data:`~arb_audit.analyzer.launchers.MAX_CONFIG_BYTES` each; the Python
file is parsed with :mod:`ast` (never run) and only when it needs a default. The evidence points at
the config file and the line that sets the key. In an audit, the command's own overrides still decide
over this default (:func:`arb_audit.analyzer.launchers.chosen_route`).
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, replace
from typing import Any

import yaml

from arb_audit.analyzer.classify import Classification
from arb_audit.analyzer.detector import Finding
from arb_audit.analyzer.launchers import MAX_CONFIG_BYTES, estimator_label, line_of_key
from arb_audit.analyzer.trainers import ROUTE_WORDS
from arb_audit.analyzer.yaml_keys import flatten_keys

MAX_FILES = 64
"""Config files read for one script (its own and those their ``defaults:`` lists pull in)."""
MAX_DEPTH = 8
"""Levels of Hydra ``defaults:`` lists followed."""
CONFIG_SUFFIXES = (".yaml", ".yml")

TextOf = Callable[[str], str | None]


@dataclass(frozen=True, slots=True)
class Setting:
    """A value a config file gives a key."""

    path: str
    """The config file (workspace-relative, posix)."""
    key: str
    """The dotted key, as the merged config spells it."""
    value: object
    """What it is set to."""
    line: int
    """1-based line in that file."""
    excerpt: str
    """That line, trimmed."""


def with_config_default(
    result: Classification, path: str, files: Collection[str], text_of: TextOf
) -> Classification:
    """Return ``result`` with the default route the workspace's config gives it, or unchanged.

    ``path``: the classified file; ``files``: every path of the workspace; ``text_of`` reads one.
    Only a ``CONFIG_DEPENDENT`` file without a default of its own is looked at.
    """
    if result.primary != "CONFIG_DEPENDENT" or result.default_route is not None:
        return result
    keys = list(dict.fromkeys(f.key for f in result.findings if f.signal == "dispatch" and f.key))
    text = text_of(path) if keys else None
    if text is None:
        return result
    named = _named_configs(text, path, files)
    found = _first_setting(named, keys, result.possible_routes, files, text_of)
    how = "the config the script loads"
    if found is None and not named:
        found = _agreed_setting(files, keys, result.possible_routes, text_of)
        how = "every config of the workspace that sets it"
    if found is None:
        return result
    setting, label = found
    evidence = Finding(
        "WorkspaceConfig",
        "dispatch",
        routes=tuple(result.possible_routes),
        default=label,
        key=setting.key,
        message=f"{setting.path} sets {setting.key}: {setting.value} ({how})",
        line=setting.line,
        excerpt=setting.excerpt,
        path=setting.path,
    )
    return replace(result, default_route=label, findings=[*result.findings, evidence])


def _named_configs(text: str, path: str, files: Collection[str]) -> list[str]:
    """Return the workspace's config files a script names, in the order it names them."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    folder = posixpath.dirname(path)
    literals: list[str] = []
    hydra_paths: list[str] = []
    hydra_names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and isinstance(node.value, ast.Constant):
            value = node.value.value
            if node.arg == "config_path" and isinstance(value, str):
                hydra_paths.append(value)
            elif node.arg == "config_name" and isinstance(value, str):
                hydra_names.append(value)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.endswith(CONFIG_SUFFIXES)
            and len(node.value) < 1024
        ):
            literals.append(node.value)
    candidates = [
        posixpath.join(config_path, name if name.endswith(CONFIG_SUFFIXES) else f"{name}.yaml")
        for name in hydra_names
        for config_path in hydra_paths or [""]
    ] + literals
    found: list[str] = []
    for candidate in candidates:
        for base in (folder, ""):
            resolved = _inside(base, candidate)
            if resolved is not None and resolved in files and resolved not in found:
                found.append(resolved)
                break
    return found


def _inside(base: str, relative: str) -> str | None:
    """Join a config reference to a folder of the workspace; None when it leaves the workspace."""
    if relative.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(base, relative))
    return None if joined.startswith("..") or joined == "." else joined


def _first_setting(
    configs: list[str], keys: list[str], possible: list[str], files: Collection[str], text_of: TextOf
) -> tuple[Setting, str] | None:
    budget = [MAX_FILES]
    for config in configs:
        for setting in _settings(config, keys, files, text_of, budget):
            label = _label(setting.value, possible)
            if label is not None:
                return setting, label
    return None


def _agreed_setting(
    files: Collection[str], keys: list[str], possible: list[str], text_of: TextOf
) -> tuple[Setting, str] | None:
    budget = [MAX_FILES]
    found: list[tuple[Setting, str]] = []
    for config in sorted(f for f in files if f.endswith(CONFIG_SUFFIXES)):
        for setting in _settings(config, keys, files, text_of, budget, follow=False):
            label = _label(setting.value, possible)
            if label is not None:
                found.append((setting, label))
    return found[0] if found and len({label for _, label in found}) == 1 else None


def _label(value: object, possible: list[str]) -> str | None:
    if not isinstance(value, str):
        return None
    label = ROUTE_WORDS.get(value.lower()) or estimator_label(value)
    return label if label is not None and (not possible or label in possible) else None


def _settings(
    config: str,
    keys: list[str],
    files: Collection[str],
    text_of: TextOf,
    budget: list[int],
    follow: bool = True,
) -> Iterator[Setting]:
    """Yield what a config (merged with its Hydra defaults) sets each key to, later files first."""
    merged: dict[str, tuple[str, object]] = {}  # dotted key -> (file, value), the last one wins
    _merge(config, "", files, text_of, budget, merged, MAX_DEPTH if follow else 0)
    for key in keys:
        for dotted, (source, value) in merged.items():
            if dotted == key or dotted.endswith(f".{key}") or key.endswith(f".{dotted}"):
                line, excerpt = line_of_key(text_of(source) or "", dotted)
                yield Setting(source, dotted, value, line, excerpt.strip()[:160])


def _merge(
    config: str,
    prefix: str,
    files: Collection[str],
    text_of: TextOf,
    budget: list[int],
    merged: dict[str, tuple[str, object]],
    depth: int,
) -> None:
    """Merge one config file (its ``defaults:`` first, then itself) into ``merged`` under ``prefix``."""
    if budget[0] <= 0:
        return
    budget[0] -= 1
    data = _load(config, text_of)
    if data is None:
        return
    folder = posixpath.dirname(config)
    defaults = data.get("defaults")
    if depth > 0 and isinstance(defaults, list):
        for item in defaults[:MAX_FILES]:
            for included, under in _included(item, folder, prefix):
                if included in files:
                    _merge(included, under, files, text_of, budget, merged, depth - 1)
    for key, value in flatten_keys({k: v for k, v in data.items() if k != "defaults"}, prefix):
        merged[key] = (config, value)


def _included(item: object, folder: str, prefix: str) -> Iterator[tuple[str, str]]:
    """Yield the files a Hydra ``defaults:`` entry pulls in, and the key each is merged under."""
    if isinstance(item, str) and item != "_self_":
        name = item.split("@", 1)[0].strip()
        yield posixpath.join(folder, f"{name}.yaml"), prefix
    elif isinstance(item, dict):
        for group, option in item.items():
            if not isinstance(group, str) or not isinstance(option, str):
                continue
            group = group.removeprefix("override ").strip().split("@", 1)[0].lstrip("/")
            under = ".".join(p for p in (prefix, group.replace("/", ".")) if p)
            yield posixpath.join(folder, group, f"{option}.yaml"), under


def _load(config: str, text_of: TextOf) -> dict[Any, Any] | None:
    text = text_of(config)
    if text is None or len(text) > MAX_CONFIG_BYTES:
        return None
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    return data if isinstance(data, dict) else None
