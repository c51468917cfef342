"""The keys the screen answers, on one line at its foot.

Textual's ``Footer`` recomposes whenever the focus moves or a screen comes back, mounting and styling
one widget per key: some 30 ms a time on the desk's screens (benchmarks/bench_review.py). This bar
redraws one line of text, and only when the keys shown changed.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

from rich.text import Text
from textual import events
from textual.app import App
from textual.screen import Screen
from textual.widget import Widget


class Key(NamedTuple):
    """One key shown."""

    key: str
    """The key's name, as bindings and ``simulate_key`` spell it."""
    display: str
    """How it is shown."""
    description: str
    """What it does."""
    enabled: bool
    """Whether it does anything now (a disabled key is dimmed)."""


def shown_keys(screen: Screen[Any], app: App[Any]) -> tuple[Key, ...]:
    """Return the keys ``screen`` shows in its footer: the first binding of each action, in order."""
    keys: dict[str, Key] = {}
    for _, binding, enabled, _tooltip in screen.active_bindings.values():
        if binding.show and binding.action not in keys:
            keys[binding.action] = Key(
                binding.key, app.get_key_display(binding), binding.description, enabled
            )
    return tuple(keys.values())


class KeyBar(Widget):
    """The focused screen's keys and what they do; a click on one presses it."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"key-bar--key", "key-bar--description", "key-bar--disabled"}

    def __init__(self) -> None:
        super().__init__()
        self.keys: tuple[Key, ...] = ()
        """The keys shown."""
        self._spans: list[tuple[int, int, str]] = []

    def on_mount(self) -> None:
        """Follow the screen's bindings (focus moves, screens resumed)."""
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self._bindings_changed(self.screen)

    def _bindings_changed(self, screen: Screen[Any]) -> None:
        keys = shown_keys(screen, self.app)
        if keys != self.keys:
            self.keys = keys
            self.refresh()

    def render(self) -> Text:
        """Draw each key and its description."""
        text, self._spans = Text(no_wrap=True, overflow="crop"), []
        key_style = self.get_component_rich_style("key-bar--key")
        description_style = self.get_component_rich_style("key-bar--description")
        disabled = self.get_component_rich_style("key-bar--disabled")
        for key, display, description, enabled in self.keys:
            start = len(text)
            text.append(f" {display} ", key_style if enabled else key_style + disabled)
            text.append(f"{description} ", description_style if enabled else description_style + disabled)
            self._spans.append((start, len(text), key))
        return text

    def on_click(self, event: events.Click) -> None:
        """Press the key clicked on."""
        for start, end, key in self._spans:
            if start <= event.x < end:
                self.app.simulate_key(key)
                return
