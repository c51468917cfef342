"""Settings read from YAML text: flattened within bounds, and never an error."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from arb_audit.analyzer.yaml_keys import MAX_EMBEDDED_YAML, flatten_keys, string_settings


def test_nested_string_settings_come_back_under_dotted_keys() -> None:
    text = "model_type: llm\nadapter:\n  type: lora\ntrainer:\n  type: dpo\n  epochs: 3\n"
    assert sorted(string_settings(text)) == [
        ("adapter.type", "lora"),
        ("model_type", "llm"),
        ("trainer.type", "dpo"),
    ]


def test_text_that_is_no_mapping_or_too_long_gives_nothing() -> None:
    assert string_settings("- a\n- b\n") == []
    assert string_settings("stage: [unclosed\n") == []
    assert string_settings("just prose, no settings") == []
    assert string_settings("stage: sft\n" + "#" * MAX_EMBEDDED_YAML) == []


def test_a_mapping_holding_itself_is_read_once() -> None:
    looped: dict[str, object] = {"stage": "dpo"}
    looped["again"] = looped
    assert flatten_keys(looped) == [("stage", "dpo")]
    shared = {"x": 1}
    assert sorted(flatten_keys({"a": shared, "b": shared})) == [("a.x", 1), ("b.x", 1)]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab: -&*{}[]\n\t'\"!#%@|>,?")), max_size=300))
def test_string_settings_never_raises(text: str) -> None:
    for key, value in string_settings(text):
        assert isinstance(key, str) and isinstance(value, str)
