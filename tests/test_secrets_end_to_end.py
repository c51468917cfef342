"""A run folder full of keys, in every escaping: none reaches --json, the report, the HTML page or the store.

The keys sit where agents put them: tool results (JSON-escaped, \\u-escaped, JSON inside JSON), command
lines (shell-quoted, in URLs), a training script the audit quotes as evidence, a ``.env`` file, a log.
"""

from __future__ import annotations

import json
import shlex
import urllib.parse
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from arb_audit.cli import main
from arb_audit.redaction import MARK
from tests.arb_audit.test_redaction import ENCODINGS, NAMED, NAMED_VALUES, SHAPES, leaks
from tests.fixture_runs import REMOTE_ROOT, TRAIN_SFT, attempts_en, write_run
from tests.transcript_lines import claude_call, claude_end, claude_init, claude_result, jsonl

CANARY = "canary-7f3e"
"""A word written beside every key: where it shows, the key's place is shown (the test exercises it)."""

SHA = "3f2a9c1d0b8e7f6a5d4c3b2a1f0e9d8c7b6a5f4e"


def _written(name: str, value: str) -> str:
    """A key as it is written: alone when its shape tells it, else after the name that tells it."""
    return NAMED[name](value) if name in NAMED else value


def _run_with(tmp: Path, secrets: dict[str, str]) -> Path:
    """Write an AutoRL-Bench run whose transcript, code, logs and .env hold every one of ``secrets``."""
    scenario = attempts_en()
    workspace = f"{REMOTE_ROOT}/webshop/{scenario.folder}"
    events: list[dict[str, object]] = [claude_init(cwd=workspace)]
    texts = {name: f"{CANARY} {_written(name, value)}" for name, value in secrets.items()}
    for i, (name, text) in enumerate(sorted(texts.items())):
        for enc, encode in ENCODINGS.items():
            events.append(claude_call(f"c{i}{enc}", "Bash", command=f"echo {shlex.quote(encode(text))}"))
            events.append(claude_result(f"c{i}{enc}", f"{name}: {encode(text)}\ngit at {SHA}"))
    key = next(v for n, v in sorted(secrets.items()) if n in SHAPES)
    events.append(
        claude_call(
            "k",
            "Bash",
            command=f"curl -H 'Authorization: Bearer {key}' 'https://x/?k={urllib.parse.quote(key)}'",
        )
    )
    events.append(claude_result("k", "ok"))
    events.append(claude_call("env", "Bash", command="cat .env"))
    events.append(claude_result("env", "\n".join(f"K{i}={v}" for i, v in enumerate(secrets.values()))))
    events.append(claude_end())
    scenario.extra_files = {
        "agent.jsonl": jsonl(events),
        ".env": "".join(f"SECRET_{i}={v}\n" for i, v in enumerate(secrets.values())),
        "logs/train.log": "".join(f"{CANARY} {_written(name, v)}\n" for name, v in secrets.items()),
    }
    # the trainer's own line, which the audit quotes as the route's evidence, holds a key
    script = TRAIN_SFT.replace(
        'trainer = SFTTrainer(model="models/Qwen/Qwen2.5-1.5B"',
        f'trainer = SFTTrainer(model="models/Qwen/Qwen2.5-1.5B", hub_token="{key}"  # {CANARY}\n   ',
    )
    scenario.code = {
        "code/train.py": script,
        "code/keys.py": "".join(f"# {_written(n, v)}\n" for n, v in secrets.items()),
    }
    return write_run(scenario, tmp / "run")


def _outputs(run: Path, tmp: Path) -> dict[str, str]:
    runner = CliRunner()
    as_json = runner.invoke(main, [str(run), "--json"])
    assert as_json.exit_code == 0, as_json.output
    readable = runner.invoke(main, [str(run)], env={"COLUMNS": "400"})
    assert readable.exit_code == 0, readable.output
    page = tmp / "audit.html"
    html = runner.invoke(main, [str(run), "--html", str(page)])
    assert html.exit_code == 0, html.output
    stores = sorted((run / ".arb-audit").glob("*.duckdb"))
    assert stores
    return {
        "--json": as_json.stdout,
        "report": readable.stdout,
        "--html": page.read_text(encoding="utf-8"),
        **{f"store {s.name}": s.read_bytes().decode("latin-1") for s in stores},
    }


@st.composite
def _secrets(draw: st.DrawFn) -> dict[str, str]:
    found = {name: draw(strategy) for name, strategy in SHAPES.items()}
    found.update({name: draw(NAMED_VALUES[name]) for name in ("aws-secret", "wandb-env", "bearer")})
    return found


@pytest.mark.slow
# each example is three audits: no shrinking (a failure names the key and where it leaked)
@settings(
    max_examples=2,
    deadline=None,
    phases=[Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(secrets=_secrets())
def test_no_key_leaves_the_run_folder(
    tmp_path_factory: pytest.TempPathFactory, secrets: dict[str, str]
) -> None:
    tmp = tmp_path_factory.mktemp("keys")
    run = _run_with(tmp, secrets)
    outputs = _outputs(run, tmp)
    for where, text in outputs.items():
        for name, value in secrets.items():
            assert not leaks(text, value), f"{name} ({value}) in {where}"
    assert MARK in outputs["--json"]
    assert CANARY in outputs["--json"] and CANARY in outputs["--html"]
    assert SHA in outputs["--json"] or any(SHA in t for t in outputs.values())


def test_named_keys_and_dotenv_lines_leave_no_trace(tmp_path: Path) -> None:
    secrets = {
        "openai-project": "sk-proj-Fx7Qa2Lm9Rt4Vb8Nc3Kd6Wp1Zs5Hy0Je7Ug2Oi4TxQ8vR3nM",
        "huggingface": "hf_jhCdjKJDfkjhKJHKJhkjhKJHkjhkjhKJH",
        "aws-secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wandb-env": "0123456789abcdef0123456789abcdef01234567",
    }
    run = _run_with(tmp_path, secrets)
    (run / ".env").write_text("DB_PASS=hunter2x\n")
    outputs = _outputs(run, tmp_path)
    for where, text in outputs.items():
        for name, value in {**secrets, "dotenv": "hunter2x"}.items():
            assert not leaks(text, value), f"{name} in {where}"
    report = json.loads(outputs["--json"])
    assert any(
        CANARY in (c.get("command") or "") + (c.get("output_excerpt") or "") for c in report["commands"]
    )
