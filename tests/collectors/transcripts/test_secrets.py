"""Secrets are redacted by their shape or by the name they are assigned to, and code is left alone."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arb_audit.collectors.transcripts.secrets import MARK, redact

OPENAI = "sk-proj-Fx7Qa2Lm9Rt4Vb8Nc3Kd6Wp1Zs5Hy0Je7Ug2Oi4T"


@pytest.mark.parametrize(
    "text",
    [
        f"export OPENAI_API_KEY={OPENAI}",
        f'{{"output": "OPENAI_API_KEY={OPENAI}\\nVLLM_API_KEY=local"}}',
        f'{{"output": "keys:\\n{OPENAI}\\n"}}',  # right after an escaped line break
        "ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv",
        "GEMINI_API_KEY=AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "huggingface-cli login --token hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456",
        'curl -H "Authorization: Bearer 9f8e7d6c5b4a39281706"',
        "WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567",
        '"HF_TOKEN": "abcd1234efgh5678"',
        "AWS key AKIAIOSFODNN7EXAMPLE in env",
        '{"headers": {"Authorization": "Bearer 9f8e7d6c5b4a39281706"}}',
        'client = OpenAI(api_key="abcd1234efgh5678ijkl")',
        "python gen.py --api-key abcd1234efgh5678ijkl",
        f"\x1b[0m{OPENAI}",
    ],
)
def test_secrets_are_replaced(text: str) -> None:
    redacted = redact(text)
    assert MARK in redacted
    for secret in (
        OPENAI,
        "sk-ant-api03",
        "AIzaSy",
        "hf_AbCd",
        "9f8e7d6c",
        "0123456789abcdef",
        "abcd1234",
        "AKIAIOSF",
    ):
        assert secret not in redacted


@pytest.mark.parametrize(
    "code",
    [
        'HF_TOKEN = os.environ.get("HF_TOKEN")',
        "pad_token = tokenizer.eos_token",
        "MAX_NEW_TOKEN=1024",
        "max_tokens: 100000000",
        "task-specific-fine-tuning-data-v1x",
        "OPENAI_API_KEY=$OPENAI_API_KEY python gen.py",
        "git checkout 3f2a9c1d0b8e7f6a5d4c3b2a1f0e9d8c7b6a5f4e",
        'curl -H "Authorization: Bearer $OPENAI_API_KEY" localhost:8000',
        "headers = {'Authorization': f\"Bearer {os.environ['VLLM_API_KEY']}\"}",
        "PAD_TOKEN=tok2.eos",
        "MAX_TOKEN=1234567890",
        "from hub import hf_hubdownloadwithprogressbarandretries",
        "client = OpenAI(api_key=os.environ['OPENAI_API_KEY'])",
    ],
)
def test_code_and_references_to_secrets_stay(code: str) -> None:
    assert redact(code) == code


@given(st.text(max_size=200))
def test_redaction_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once
