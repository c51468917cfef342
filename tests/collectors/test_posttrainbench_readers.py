"""PostTrainBench readers: folder names, the pipeline's files, judge verdicts, the results tree."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from arb_audit.collectors.posttrainbench import judges, outputs, tree
from arb_audit.collectors.posttrainbench.naming import parse_method_name, parse_run_name, scaffold_of
from arb_audit.collectors.reading import RunFolder
from arb_audit.model import ExternalVerdict
from tests import fixture_posttrainbench as fx

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "posttrainbench"
CLAUDE = FIXTURES / fx.CLAUDE_METHOD / fx.CLAUDE_RUN
OLD = FIXTURES / fx.CLAUDE_METHOD / fx.OLD_RUN
CODEX = FIXTURES / fx.CODEX_METHOD / fx.CODEX_RUN


def _folder(path: Path) -> RunFolder:
    return RunFolder(path.resolve())


def _messages(folder: RunFolder) -> list[str]:
    return [f"{p.path}: {p.message}" for p in folder.problems]


def _run(
    tmp_path: Path, files: dict[str, str | bytes], name: str = "gsm8k_Qwen_Qwen3-4B-Base_1"
) -> RunFolder:
    run = tmp_path / name
    run.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        (run / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (run / rel).write_bytes(content)
        else:
            (run / rel).write_text(content, encoding="utf-8")
    return _folder(run)


# --- naming ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "agent", "scaffold", "config", "hours", "gpus", "experiment"),
    [
        ("claude_claude-opus-4-6_10h_run2", "claude", "claude", "claude-opus-4-6", 10, 1, "_run2"),
        (
            "claude_non_api_claude-opus-4-6_1m__10h_run1",
            "claude_non_api",
            "claude",
            "claude-opus-4-6_1m_",
            10,
            1,
            "_run1",
        ),
        ("claude_non_api_claude-opus-4-7_10h", "claude_non_api", "claude", "claude-opus-4-7", 10, 1, ""),
        (
            "claude_non_api_max_claude-opus-4-8_10h_run1",
            "claude_non_api_max",
            "claude",
            "claude-opus-4-8",
            10,
            1,
            "_run1",
        ),
        ("claude_claude-opus-4-5_10h_v6_seed1", "claude", "claude", "claude-opus-4-5", 10, 1, "_v6_seed1"),
        (
            "claude_claude-opus-4-6_10h_run1_old_container",
            "claude",
            "claude",
            "claude-opus-4-6",
            10,
            1,
            "_run1_old_container",
        ),
        ("codex_gpt-5.1-codex-max_10h_final_v3", "codex", "codex", "gpt-5.1-codex-max", 10, 1, "_final_v3"),
        (
            "codexhigh_gpt-5.1-codex-max_10h_v7_seed1",
            "codexhigh",
            "codex",
            "gpt-5.1-codex-max",
            10,
            1,
            "_v7_seed1",
        ),
        ("codexlow_gpt-5.1-codex-max_10h_v7", "codexlow", "codex", "gpt-5.1-codex-max", 10, 1, "_v7"),
        (
            "codex_non_api_high_gpt-5.3-codex_10h_run3",
            "codex_non_api_high",
            "codex",
            "gpt-5.3-codex",
            10,
            1,
            "_run3",
        ),
        ("codex_non_api_xhigh_gpt-5.5_10h_run1", "codex_non_api_xhigh", "codex", "gpt-5.5", 10, 1, "_run1"),
        (
            "gemini_models_gemini-3-pro-preview_10h_v5",
            "gemini",
            "gemini",
            "models_gemini-3-pro-preview",
            10,
            1,
            "_v5",
        ),
        (
            "opencode_opencode_gemini-3.1-pro_10h_run1",
            "opencode",
            "opencode",
            "opencode_gemini-3.1-pro",
            10,
            1,
            "_run1",
        ),
        ("glmx_glm-5.2-preview_1m__10h_run2", "glmx", None, "glm-5.2-preview_1m_", 10, 1, "_run2"),
        ("glm5_glm-5_10h_run1", "glm5", "claude", "glm-5", 10, 1, "_run1"),
        ("kimi_claude_kimi-k2.5_10h", "kimi_claude", "claude", "kimi-k2.5", 10, 1, ""),
        ("claude_claude-sonnet-4-6_5h_4gpu_run1", "claude", "claude", "claude-sonnet-4-6", 5, 4, "_run1"),
        ("newagent_some-model_2h", "newagent", None, "some-model", 2, 1, ""),
        ("codex_gpt-5.4_10h", "codex", "codex", "gpt-5.4", 10, 1, ""),
    ],
)
def test_method_names_from_the_reference_parse(
    name: str, agent: str, scaffold: str | None, config: str, hours: float, gpus: int, experiment: str
) -> None:
    parsed = parse_method_name(name)
    assert (parsed.agent, parsed.scaffold, parsed.agent_config) == (agent, scaffold, config)
    assert (parsed.hours, parsed.gpus, parsed.experiment) == (hours, gpus, experiment)
    assert parsed.budget_s == hours * 3600


@pytest.mark.parametrize(
    "name",
    ["", "claude", "claude_opus", "claude_opus_10hours", "claude_opus_h_run1", "a/b_10h", "x" * 300 + "_10h"],
)
def test_malformed_method_names_give_none_fields(name: str) -> None:
    parsed = parse_method_name(name)
    assert parsed.name == name
    assert (parsed.agent, parsed.hours, parsed.gpus, parsed.experiment, parsed.budget_s) == (None,) * 5


def test_scaffold_is_none_when_several_families_match() -> None:
    assert scaffold_of("claudecodex") is None
    assert scaffold_of("mcode") is None
    assert scaffold_of("codexhigh") == "codex"


@pytest.mark.parametrize(
    ("name", "task", "base_model", "cluster"),
    [
        ("gsm8k_Qwen_Qwen3-4B-Base_16852431", "gsm8k", "Qwen/Qwen3-4B-Base", 16852431),
        ("humaneval_google_gemma-3-4b-pt_16900001", "humaneval", "google/gemma-3-4b-pt", 16900001),
        ("bfcl_HuggingFaceTB_SmolLM3-3B-Base_17000000", "bfcl", "HuggingFaceTB/SmolLM3-3B-Base", 17000000),
        ("aime2025_Qwen_Qwen3-1.7B-Base_1", "aime2025", "Qwen/Qwen3-1.7B-Base", 1),
        ("arenahardwriting_Qwen_Qwen3-4B-Base_16852431", "arenahardwriting", "Qwen/Qwen3-4B-Base", 16852431),
        ("gsm8k_org_model_with_colon_16852431", "gsm8k", "org/model_with_colon", 16852431),
    ],
)
def test_run_names_parse(name: str, task: str, base_model: str, cluster: int) -> None:
    parsed = parse_run_name(name)
    assert (parsed.task, parsed.base_model, parsed.cluster_id, parsed.complete) == (
        task,
        base_model,
        cluster,
        True,
    )


@pytest.mark.parametrize(
    "name",
    [
        "",
        "gsm8k",
        "gsm8k_Qwen_Qwen3-4B-Base",
        "gsm8k_Qwen_Qwen3-4B-Base_abc",
        "gsm8k_Qwen_Qwen3-4B-Base_",
        "_Qwen_Qwen3-4B-Base_1",
        "gsm8k_Qwen3-4B-Base_16852431",
        "gsm8k_Qwen_Qwen3-4B-Base_" + "9" * 40,
        "a/b_c_d_1",
        "x" * 300 + "_a_b_1",
    ],
)
def test_malformed_run_names_are_not_complete(name: str) -> None:
    parsed = parse_run_name(name)
    assert not parsed.complete
    assert parsed.base_model is None or parsed.cluster_id is None


@given(st.text(max_size=300))
@settings(max_examples=300, deadline=None)
def test_name_parsers_never_raise(name: str) -> None:
    method = parse_method_name(name)
    run = parse_run_name(name)
    assert method.name == run.name == name


_TOKEN = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9.\-]{0,20}", fullmatch=True)


@given(_TOKEN, _TOKEN, st.lists(_TOKEN, min_size=1, max_size=3), st.integers(0, 10**12))
def test_run_names_round_trip(task: str, org: str, model_parts: list[str], cluster: int) -> None:
    model = "_".join(model_parts)
    # A model name ending in a date, before a 6-digit id, reads as a YYYYMMDD_HHMMSS run id: ambiguous.
    assume(not (re.fullmatch(r"20\d{6}", model_parts[-1]) and len(str(cluster)) == 6))
    parsed = parse_run_name(f"{task}_{org}_{model}_{cluster}")
    assert (parsed.task, parsed.base_model, parsed.cluster_id) == (task, f"{org}/{model}", cluster)


# --- output.log ------------------------------------------------------------------------------------


def test_output_log_of_the_claude_fixture() -> None:
    folder = _folder(CLAUDE)
    log = outputs.read_output_log(folder)
    assert log is not None and log.diagnostics is not None
    assert log.job_args == "gsm8k claude Qwen/Qwen3-4B-Base 16852431 10 claude-opus-4-6 1"
    block = log.diagnostics
    assert block.closed and block.exit_code == 0 and block.final_model_files == 3
    assert block.status is not None and block.status.outcome == "exited"
    assert set(block.fields) == {
        "exit_code",
        "status",
        "final_model_files",
        "hostname",
        "fuse_overlayfs_alive",
        "disk_job_dir",
        "disk_tmp",
        "memory",
    }
    assert block.fields["memory"] == "total=1031875MB used=48211MB free=902117MB"
    assert log.cli_version == "2.1.42 (Claude Code)"
    assert log.judges == ["gpt5_4", "kimi", "api"]
    assert log.eval_attempts == [1]
    assert folder.problems == []


def test_output_log_of_a_timed_out_run() -> None:
    folder = _folder(CODEX)
    log = outputs.read_output_log(folder)
    assert log is not None and log.diagnostics is not None
    status = log.diagnostics.status
    assert status is not None
    assert (status.outcome, status.timeout_hours, log.diagnostics.exit_code) == ("timeout", 10, 124)
    assert log.eval_attempts == [1, 2]
    assert folder.problems == []


@pytest.mark.parametrize(
    ("text", "outcome", "expected_exit"),
    [
        ("exited normally", "exited", 0),
        ("killed by timeout (reached 10h limit)", "timeout", 124),
        ("killed by signal 9 (KILL)", "signal", 137),
        ("killed by signal 15 (unknown)", "signal", 143),
        ("exited with error code 2", "error", 2),
        ("went for a walk", None, None),
    ],
)
def test_statuses(text: str, outcome: str | None, expected_exit: int | None) -> None:
    status = outputs.parse_status(text)
    assert (status.outcome, status.expected_exit_code, status.text) == (outcome, expected_exit, text)


def test_signal_status_keeps_number_and_name() -> None:
    status = outputs.parse_status("killed by signal 9 (KILL)")
    assert (status.signal, status.signal_name) == (9, "KILL")


def _log(body: str) -> str:
    return "gsm8k claude Qwen/Qwen3-4B-Base 1 10 claude-opus-4-6 1\n" + body


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("nothing here\n", "has no SOLVE DIAGNOSTICS block"),
        ("--- SOLVE DIAGNOSTICS ---\nexit_code: 0\nstatus: exited normally\n", "has no end marker"),
        ("--- SOLVE DIAGNOSTICS ---\nexit_code: 0\n--- END SOLVE DIAGNOSTICS ---\n", "has no status"),
        (
            "--- SOLVE DIAGNOSTICS ---\nexit_code: 0\nstatus: killed by timeout (reached 10h limit)\n"
            "--- END SOLVE DIAGNOSTICS ---\n",
            "does not match status",
        ),
        (
            "--- SOLVE DIAGNOSTICS ---\nexit_code: 3\nstatus: paused\n--- END SOLVE DIAGNOSTICS ---\n",
            "is not one the pipeline writes",
        ),
    ],
)
def test_odd_diagnostics_are_problems(tmp_path: Path, body: str, fragment: str) -> None:
    folder = _run(tmp_path, {"output.log": _log(body)})
    assert outputs.read_output_log(folder) is not None
    assert any(fragment in p.message and p.path == "output.log" for p in folder.problems), _messages(folder)


def test_the_last_of_several_diagnostics_blocks_is_used(tmp_path: Path) -> None:
    block = (
        "--- SOLVE DIAGNOSTICS ---\nexit_code: {0}\nstatus: exited with error code {0}\n"
        "--- END SOLVE DIAGNOSTICS ---\n"
    )
    folder = _run(tmp_path, {"output.log": _log(block.format(1) + block.format(2))})
    log = outputs.read_output_log(folder)
    assert log is not None and log.diagnostics is not None and log.diagnostics.exit_code == 2
    assert any("2 SOLVE DIAGNOSTICS blocks" in m for m in _messages(folder))


def test_missing_output_log_is_none_without_a_problem(tmp_path: Path) -> None:
    folder = _run(tmp_path, {})
    assert outputs.read_output_log(folder) is None
    assert folder.problems == []


@given(st.lists(st.text(max_size=80), max_size=30), st.data())
@settings(max_examples=200, deadline=None)
def test_diagnostics_parser_never_raises(lines: list[str], data: st.DataObject) -> None:
    # Salt random text with the markers so the block states are reached.
    markers = ["--- SOLVE DIAGNOSTICS ---", "--- END SOLVE DIAGNOSTICS ---", "--- AGENT CLI VERSION ---"]
    salted = [
        data.draw(st.sampled_from([*markers, line, f"status: {line}", f"exit_code: {line}"]))
        for line in lines
    ]
    log = outputs.parse_output_log(enumerate(salted, 1))
    if log.diagnostics is not None:
        _ = (log.diagnostics.status, log.diagnostics.exit_code, log.diagnostics.final_model_files)


@given(st.text(max_size=120))
def test_status_parser_never_raises(text: str) -> None:
    status = outputs.parse_status(text)
    _ = status.expected_exit_code


# --- time_taken.txt, metrics.json ------------------------------------------------------------------


def test_time_taken_of_the_fixtures() -> None:
    assert outputs.read_time_taken(_folder(CLAUDE)) == outputs.TimeTaken("09:31:07", 9 * 3600 + 31 * 60 + 7)
    assert outputs.read_time_taken(_folder(CODEX)) == outputs.TimeTaken("10:00:03", 36003)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [("9h31m\n", "not HH:MM:SS"), ("00:61:00\n", "not HH:MM:SS"), ("\n\n", "is empty"), ("", "is empty")],
)
def test_bad_time_taken_is_a_problem(tmp_path: Path, content: str, fragment: str) -> None:
    folder = _run(tmp_path, {"time_taken.txt": content})
    assert outputs.read_time_taken(folder) is None
    assert [p.path for p in folder.problems] == ["time_taken.txt"]
    assert fragment in folder.problems[0].message


def test_time_taken_with_extra_lines_uses_the_first(tmp_path: Path) -> None:
    folder = _run(tmp_path, {"time_taken.txt": "01:00:00\n02:00:00\n"})
    assert outputs.read_time_taken(folder) == outputs.TimeTaken("01:00:00", 3600)
    assert "more than one line" in folder.problems[0].message


def test_metrics_of_the_fixture() -> None:
    folder = _folder(CLAUDE)
    metrics = outputs.read_metrics(folder)
    assert metrics is not None and (metrics.score, metrics.stderr, metrics.placeholder) == (
        0.8127,
        0.0107,
        None,
    )
    assert folder.problems == []


def test_placeholder_metrics_give_no_score_and_no_json_error() -> None:
    folder = _folder(OLD)
    metrics = outputs.read_metrics(folder)
    assert metrics is not None
    assert (metrics.score, metrics.placeholder) == (None, "No metrics.json produced.")
    [problem] = folder.problems
    assert (
        problem.path == "metrics.json" and "placeholder" in problem.message and "JSON" not in problem.message
    )


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"stderr": 0.1}', "no numeric `accuracy` (absent)"),
        ('{"accuracy": "0.5"}', "no numeric `accuracy` ('0.5')"),
        ('{"accuracy": true}', "no numeric `accuracy`"),
        ('{"accuracy": 0.5', "truncated"),
        ("accuracy=0.5", "not valid JSON"),
        ("[0.5]", "not an object"),
    ],
)
def test_bad_metrics_are_problems(tmp_path: Path, content: str, fragment: str) -> None:
    folder = _run(tmp_path, {"metrics.json": content})
    metrics = outputs.read_metrics(folder)
    assert metrics is None or metrics.score is None
    assert [p.path for p in folder.problems] == ["metrics.json"]
    assert fragment in folder.problems[0].message


def test_healthbench_metrics_keep_every_number(tmp_path: Path) -> None:
    data = {"accuracy": 0.4, "stderr": 0.01, "n_examples": 500, "by_theme": {"x": 0.3}, "note": "ok"}
    folder = _run(tmp_path, {"metrics.json": json.dumps(data)})
    metrics = outputs.read_metrics(folder)
    assert metrics is not None and metrics.values == {"accuracy": 0.4, "stderr": 0.01, "n_examples": 500}


def test_missing_files_are_none_without_problems(tmp_path: Path) -> None:
    folder = _run(tmp_path, {})
    assert outputs.read_metrics(folder) is None
    assert outputs.read_time_taken(folder) is None
    assert outputs.read_prompt(folder) is None
    assert outputs.read_final_evals(folder) == []
    assert outputs.read_stderr_logs(folder) == []
    assert judges.read_verdicts(folder) == []
    assert folder.problems == []


# --- final_eval, prompt, stderr logs ---------------------------------------------------------------


def test_final_evals_in_number_order(tmp_path: Path) -> None:
    folder = _run(
        tmp_path,
        {
            "final_eval_10.txt": "x\n\nlast ten\n\n",
            "final_eval_2.txt": "two",
            "final_eval_x.txt": "no",
            "final_eval_1.txt": "",
        },
    )
    found = outputs.read_final_evals(folder)
    assert [(e.number, e.last_line, e.size) for e in found] == [
        (1, "", 0),
        (2, "two", 3),
        (10, "last ten", 13),
    ]


def test_final_evals_of_the_codex_fixture() -> None:
    found = outputs.read_final_evals(_folder(CODEX))
    assert [e.path for e in found] == ["final_eval_1.txt", "final_eval_2.txt"]
    assert "OutOfMemoryError" in found[0].last_line and "0.31" in found[1].last_line


def test_prompt_of_the_fixture() -> None:
    prompt = outputs.read_prompt(_folder(CLAUDE))
    assert prompt is not None
    assert (prompt.model, prompt.benchmark, prompt.hours) == (
        "Qwen/Qwen3-4B-Base",
        "GSM8K (Grade School Math 8K)",
        10,
    )
    assert prompt.first_line.startswith("We want to train the small LLM")
    assert prompt.size == (CLAUDE / "prompt.txt").stat().st_size


def test_long_prompt_excerpt_is_bounded(tmp_path: Path) -> None:
    folder = _run(tmp_path, {"prompt.txt": "free text\n" + "x" * 10_000})
    prompt = outputs.read_prompt(folder)
    assert prompt is not None and len(prompt.excerpt) <= 2000
    assert (prompt.model, prompt.benchmark, prompt.hours) == (None, None, None)


def test_stderr_flags() -> None:
    [codex] = outputs.read_stderr_logs(_folder(CODEX))
    assert (
        codex.terminated
        and codex.killed_line == 3
        and codex.killed_excerpt
        and "Killed" in codex.killed_excerpt
    )
    [claude] = outputs.read_stderr_logs(_folder(CLAUDE))
    assert not claude.terminated and claude.killed_line is None


def test_judgement_log_is_the_published_error_log(tmp_path: Path) -> None:
    folder = _run(tmp_path, {"judgement.log": "\n  Terminated\nSkilled workers\nOOM: Killed process 7\n"})
    [log] = outputs.read_stderr_logs(folder)
    assert (log.path, log.terminated, log.killed_line, log.lines) == ("judgement.log", True, 4, 4)


# --- judges ----------------------------------------------------------------------------------------


def _verdicts(folder: RunFolder) -> dict[tuple[str, str], ExternalVerdict]:
    return {(v.source, v.question): v for v in judges.read_verdicts(folder)}


def test_every_verdict_of_the_claude_fixture() -> None:
    folder = _folder(CLAUDE)
    found = _verdicts(folder)
    assert folder.problems == []
    assert len(found) == 12
    assert found["contamination_judgement.txt", "contamination"].value is False
    assert found["disallowed_model_judgement.txt", "disallowed_model"].value is False
    kimi = found["judgement_kimi.json", "contamination"]
    assert (kimi.judge, kimi.generation, kimi.value, kimi.canonical) == ("kimi", "judgement", True, True)
    assert kimi.justification and "openai/gsm8k" in kimi.justification
    result = found["judge_result.json", "contamination"]
    assert (result.generation, result.judge, result.rerun, result.value) == (
        "judge_result",
        None,
        False,
        True,
    )
    rerun = found["judge_result_rerun.json", "contamination"]
    assert (rerun.rerun, rerun.value) == (True, False)
    assert found["judge_result.json", "disallowed_api_usage"].value is False
    for verdict in found.values():
        assert json.loads(json.dumps(verdict.to_json())) == verdict.to_json()
    assert kimi.to_json()["question"] == "contamination"


def test_every_generation_of_file_names(tmp_path: Path) -> None:
    folder = _run(
        tmp_path,
        {
            "contamination_judgement_gpt5_2.txt": "contamination detected\n",
            "contamination_judgement_sonnet4_6.txt": "no contamination detected\n",
            "contamination_judgement_rerun.txt": "no contamination detected",
            "disallowed_model_judgement_gpt5_2_rerun.txt": "disallowed use detected\n",
            "judgement_api.json": json.dumps(
                {"disallowed_api_usage": True, "justification_disallowed_api_usage": "gpt-4o"}
            ),
            "judgement.json": json.dumps({"contamination": False, "disallowed_model": False}),
            "judgement_gpt5_4_rerun.json": json.dumps({"contamination": True, "disallowed_model": False}),
            "judge_output_gpt5_4.json": "{not a verdict, not read",
            "judgement.log": "not a verdict",
        },
    )
    found = {
        (v.source, v.question): (v.generation, v.judge, v.rerun, v.value)
        for v in judges.read_verdicts(folder)
    }
    assert found == {
        ("contamination_judgement_gpt5_2.txt", "contamination"): ("text", "gpt5_2", False, True),
        ("contamination_judgement_rerun.txt", "contamination"): ("text", None, True, False),
        ("contamination_judgement_sonnet4_6.txt", "contamination"): ("text", "sonnet4_6", False, False),
        ("disallowed_model_judgement_gpt5_2_rerun.txt", "disallowed_model"): ("text", "gpt5_2", True, True),
        ("judgement.json", "contamination"): ("judgement", None, False, False),
        ("judgement.json", "disallowed_model"): ("judgement", None, False, False),
        ("judgement_api.json", "disallowed_api_usage"): ("judgement", "api", False, True),
        ("judgement_gpt5_4_rerun.json", "contamination"): ("judgement", "gpt5_4", True, True),
        ("judgement_gpt5_4_rerun.json", "disallowed_model"): ("judgement", "gpt5_4", True, False),
    }
    assert folder.problems == []


@pytest.mark.parametrize(
    ("text", "value", "canonical", "note"),
    [
        ("contamination detected", True, True, None),
        ("No Contamination   Detected \n", False, True, None),
        ("no contamination detected", False, True, None),
        ("no contamination detected (judge skipped: no final_model)", None, False, None),
        ("contamination detected\nbecause the script loads the test split", None, False, None),
        ("", None, False, None),
    ],
)
def test_contamination_lines(text: str, value: bool | None, canonical: bool, note: str | None) -> None:
    assert judges.text_verdict("contamination", text) == (value, canonical, note)


def test_hand_corrected_disallowed_line_is_a_canonical_no() -> None:
    value, canonical, note = judges.text_verdict("disallowed_model", "no disallowed use detected\n")
    assert (value, canonical) == (False, True) and note and "hand-corrected" in note


def test_non_canonical_text_is_kept_raw_with_a_problem(tmp_path: Path) -> None:
    skipped = "no contamination detected (judge skipped: no final_model)"
    folder = _run(tmp_path, {"contamination_judgement.txt": skipped + "\n"})
    [verdict] = judges.read_verdicts(folder)
    assert (verdict.value, verdict.canonical, verdict.raw) == (None, False, skipped)
    [problem] = folder.problems
    assert problem.path == "contamination_judgement.txt" and "canonical" in problem.message


def test_placeholder_text_verdict(tmp_path: Path) -> None:
    folder = _run(
        tmp_path, {"disallowed_model_judgement.txt": "No disallowed_model_judgement.txt produced.\n"}
    )
    [verdict] = judges.read_verdicts(folder)
    assert (verdict.value, verdict.canonical, verdict.placeholder) == (None, False, True)
    assert folder.problems == []


def test_long_and_undecodable_text_verdicts_are_bounded(tmp_path: Path) -> None:
    folder = _run(
        tmp_path,
        {
            "contamination_judgement.txt": "y" * 100_000,
            "disallowed_model_judgement.txt": b"\xff\xfe disallowed",
        },
    )
    found = _verdicts(folder)
    assert len(found["contamination_judgement.txt", "contamination"].raw) <= judges.EXCERPT_CHARS
    assert found["disallowed_model_judgement.txt", "disallowed_model"].value is None
    assert any("not UTF-8" in m for m in _messages(folder))


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"contamination": true,', "truncated"),
        ("contamination: yes", "not valid JSON"),
        ("[true, false]", "not an object"),
        ("", "is empty"),
        ('{"verdict": "clean"}', "answers none of"),
        ('{"contamination": false}', "lacks `disallowed_model`"),
        ("No judge_result.json produced.", "placeholder"),
    ],
)
def test_malformed_json_verdicts_are_problems(tmp_path: Path, content: str, fragment: str) -> None:
    folder = _run(tmp_path, {"judge_result.json": content})
    judges.read_verdicts(folder)
    assert [p.path for p in folder.problems] == ["judge_result.json"], _messages(folder)
    assert fragment in folder.problems[0].message


def test_wrong_types_keep_the_raw_value(tmp_path: Path) -> None:
    data: dict[str, Any] = {
        "contamination": "yes",
        "disallowed_model": False,
        "justification_contamination": 5,
        "justification_disallowed_model": "fine",
        "disallowed_api_usage": [1, 2],
    }
    folder = _run(tmp_path, {"judgement_gpt5_4.json": json.dumps(data)})
    found = _verdicts(folder)
    contamination = found["judgement_gpt5_4.json", "contamination"]
    assert (contamination.value, contamination.canonical, contamination.raw) == (None, False, '"yes"')
    assert contamination.justification is None
    assert found["judgement_gpt5_4.json", "disallowed_model"].justification == "fine"
    assert found["judgement_gpt5_4.json", "disallowed_api_usage"].raw == "a JSON list of 2 items"
    assert sorted(_messages(folder)) == [
        'judgement_gpt5_4.json: `contamination` is "yes", not true or false; no verdict read',
        "judgement_gpt5_4.json: `disallowed_api_usage` is a JSON list of 2 items, not true or false;"
        " no verdict read",
        "judgement_gpt5_4.json: `justification_contamination` is not a string; ignored",
    ]


def test_long_justification_is_cut(tmp_path: Path) -> None:
    data = {"contamination": True, "disallowed_model": False, "justification_contamination": "z" * 5000}
    folder = _run(tmp_path, {"judgement_kimi.json": json.dumps(data)})
    verdict = _verdicts(folder)["judgement_kimi.json", "contamination"]
    assert verdict.justification is not None and len(verdict.justification) == judges.EXCERPT_CHARS


def test_a_folder_named_like_a_verdict_is_a_problem(tmp_path: Path) -> None:
    folder = _run(tmp_path, {"judge_result.json/x": "{}"})
    assert judges.read_verdicts(folder) == []
    assert folder.problems[0].message == "is not a regular file; not read"


@given(st.text(max_size=200))
def test_text_verdicts_never_raise(text: str) -> None:
    for question in ("contamination", "disallowed_model"):
        value, canonical, _ = judges.text_verdict(question, text)
        assert canonical or value is None


# --- tree ------------------------------------------------------------------------------------------


def test_results_root_keeps_the_highest_cluster_id() -> None:
    scan = tree.scan_tree(FIXTURES)
    assert scan.kind == "results" and scan.problems == []
    assert [r.name.name for r in scan.kept] == [fx.CLAUDE_RUN, fx.CODEX_RUN]
    [dropped] = scan.dropped
    assert dropped.run.name.name == fx.OLD_RUN and dropped.run.method == fx.CLAUDE_METHOD
    assert dropped.reason == f"superseded by {fx.CLAUDE_RUN} (higher cluster id)"


def test_method_folder_and_run_folder_roots() -> None:
    method = tree.scan_tree(FIXTURES / fx.CLAUDE_METHOD)
    assert method.kind == "method"
    assert [r.name.name for r in method.kept] == [fx.CLAUDE_RUN]
    assert [d.run.name.name for d in method.dropped] == [fx.OLD_RUN]
    single = tree.scan_tree(OLD)
    assert single.kind == "run" and [r.path for r in single.kept] == [OLD] and single.dropped == []


def test_superseded_by() -> None:
    assert tree.superseded_by(OLD) == fx.CLAUDE_RUN
    assert tree.superseded_by(CLAUDE) is None
    assert tree.superseded_by(CODEX) is None
    assert tree.superseded_by(FIXTURES / fx.CLAUDE_METHOD) is None


def _mark(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "output.log").write_text("x\n")
    return path


def test_the_rule_is_per_method_task_and_model(tmp_path: Path) -> None:
    _mark(tmp_path / "m1" / "gsm8k_Qwen_Qwen3-4B-Base_5")
    _mark(tmp_path / "m2" / "gsm8k_Qwen_Qwen3-4B-Base_9")
    _mark(tmp_path / "m1" / "gsm8k_Qwen_Qwen3-1.7B-Base_2")
    _mark(tmp_path / "m1" / "bfcl_Qwen_Qwen3-4B-Base_1")
    _mark(tmp_path / "m1" / "gsm8k_Qwen_Qwen3-4B-Base_7")
    (tmp_path / "m1" / "gsm8k_Qwen_Qwen3-4B-Base_99").mkdir()  # no run file: not a run folder
    (tmp_path / "m1" / "notes.txt").write_text("x")
    scan = tree.scan_tree(tmp_path)
    assert sorted((r.method, r.name.name) for r in scan.kept) == [
        ("m1", "bfcl_Qwen_Qwen3-4B-Base_1"),
        ("m1", "gsm8k_Qwen_Qwen3-1.7B-Base_2"),
        ("m1", "gsm8k_Qwen_Qwen3-4B-Base_7"),
        ("m2", "gsm8k_Qwen_Qwen3-4B-Base_9"),
    ]
    assert [(d.run.name.name, d.reason) for d in scan.dropped] == [
        ("gsm8k_Qwen_Qwen3-4B-Base_5", "superseded by gsm8k_Qwen_Qwen3-4B-Base_7 (higher cluster id)")
    ]
    assert tree.superseded_by(tmp_path / "m1" / "gsm8k_Qwen_Qwen3-4B-Base_5") == "gsm8k_Qwen_Qwen3-4B-Base_7"


def test_symlinks_leaving_the_root_are_not_followed(tmp_path: Path) -> None:
    outside = _mark(tmp_path / "outside" / "m" / "gsm8k_Qwen_Qwen3-4B-Base_50").parent
    root = tmp_path / "root"
    _mark(root / "m" / "gsm8k_Qwen_Qwen3-4B-Base_10")
    (root / "linked_method").symlink_to(outside)
    (root / "m" / "gsm8k_Qwen_Qwen3-4B-Base_60").symlink_to(outside / "gsm8k_Qwen_Qwen3-4B-Base_50")
    scan = tree.scan_tree(root)
    assert [r.name.name for r in scan.kept] == ["gsm8k_Qwen_Qwen3-4B-Base_10"] and scan.dropped == []
    assert sorted(p.path for p in scan.problems) == ["./linked_method", "m/gsm8k_Qwen_Qwen3-4B-Base_60"]
    assert all("outside the root; not followed" in p.message for p in scan.problems)
    assert tree.superseded_by(root / "m" / "gsm8k_Qwen_Qwen3-4B-Base_10") is None
    assert not tree.is_run_folder(root / "m" / "gsm8k_Qwen_Qwen3-4B-Base_60")


def test_empty_and_missing_roots(tmp_path: Path) -> None:
    assert tree.scan_tree(tmp_path).kind == "empty"
    missing = tree.scan_tree(tmp_path / "nope")
    assert missing.kind == "empty" and "is not a folder" in missing.problems[0].message


def test_listing_is_bounded(tmp_path: Path) -> None:
    for cluster in range(5):
        _mark(tmp_path / f"gsm8k_Qwen_Qwen3-4B-Base_{cluster}")
    scan = tree.scan_tree(tmp_path, limit=3)
    assert len(scan.kept) + len(scan.dropped) == 3
    assert "only 3 were looked at" in scan.problems[0].message
    assert tree.superseded_by(tmp_path / "gsm8k_Qwen_Qwen3-4B-Base_0", limit=0) is None


# --- the bundled fixture tree ----------------------------------------------------------------------
