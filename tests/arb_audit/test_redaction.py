"""Every provider's key shape is redacted in every escaping the tool reads; hashes and code stay."""

from __future__ import annotations

import json
import random
import shlex
import string
import urllib.parse
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arb_audit.evidence import Evidence
from arb_audit.model import Command
from arb_audit.redaction import MARK, redact, redact_all, redact_fields

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


def _body(alphabet: str, size: int, *, digit: bool = False, upper: bool = False) -> st.SearchStrategy[str]:
    """Random key material as a provider makes it (never "0000...", which a hash of ours can hold).

    Real keys of these lengths hold a digit (and a capital) almost surely; ``digit``, ``upper`` make it sure.
    """
    seeds = st.integers(0, 2**64).map(random.Random)
    text = seeds.map(lambda r: "".join(r.choice(alphabet) for _ in range(size)))
    if digit:
        text = st.builds(lambda t, d: d + t[1:], text, st.sampled_from(string.digits))
    if upper:
        text = st.builds(lambda t, u: t[:-1] + u, text, st.sampled_from(string.ascii_uppercase))
    return text


SHAPES: dict[str, st.SearchStrategy[str]] = {
    "openai": _body(ALNUM + "_-", 48, digit=True).map(lambda b: "sk-" + b),
    "openai-project": _body(ALNUM + "_-", 120, digit=True).map(lambda b: "sk-proj-" + b),
    "anthropic": _body(ALNUM + "_-", 80).map(lambda b: "sk-ant-api03-" + b),
    "github": st.tuples(st.sampled_from(["ghp_", "gho_"]), _body(ALNUM, 36)).map("".join),
    "github-pat": _body(ALNUM + "_", 82).map(lambda b: "github_pat_" + b),
    "huggingface": _body(string.ascii_lowercase, 34, upper=True).map(lambda b: "hf_" + b),
    "aws-key-id": st.tuples(
        st.sampled_from(["AKIA", "ASIA"]), _body(string.ascii_uppercase + string.digits, 16)
    ).map("".join),
    "google": _body(ALNUM + "_-", 35).map(lambda b: "AIza" + b),
    "slack": st.tuples(st.sampled_from("bpoa"), _body(ALNUM, 40)).map(lambda t: f"xox{t[0]}-{t[1]}"),
}
"""Keys recognised by their shape alone."""

NAMED: dict[str, Callable[[str], str]] = {
    "aws-secret": lambda v: f"aws_secret_access_key = {v}",
    "aws-secret-env": lambda v: f"AWS_SECRET_ACCESS_KEY={v}",
    "wandb-env": lambda v: f"export WANDB_API_KEY={v}",
    "wandb-netrc": lambda v: f"machine api.wandb.ai\n  login user\n  password {v}",
    "bearer": lambda v: f"Authorization: Bearer {v}",
    "bearer-bare": lambda v: f"token is Bearer {v} now",
}
"""Keys recognised by where they are written, with the value's strategy."""
NAMED_VALUES: dict[str, st.SearchStrategy[str]] = {
    "aws-secret": _body(B64, 40),
    "aws-secret-env": _body(B64, 40),
    "wandb-env": _body(HEX, 40),
    "wandb-netrc": _body(HEX, 40, digit=True),
    "bearer": _body(ALNUM + "._-", 32, digit=True),
    "bearer-bare": _body(ALNUM + "._-", 32, digit=True),
}


def _json_string(text: str) -> str:
    return json.dumps({"content": text})


def _json_all_escaped(text: str) -> str:
    return '{"content": "' + "".join(f"\\u{ord(c):04x}" for c in text) + '"}'


def _json_twice(text: str) -> str:
    return json.dumps({"output": json.dumps({"content": text})})


def _url_all(text: str) -> str:
    return "https://example.org/?q=" + "".join(f"%{b:02X}" for b in text.encode())


ENCODINGS: dict[str, Callable[[str], str]] = {
    "plain": lambda t: t,
    "json": _json_string,
    "json-unicode-escapes": _json_all_escaped,
    "json-in-json": _json_twice,
    "shell": lambda t: "echo " + shlex.quote(t) + " > out.txt",
    "shell-double": lambda t: 'sh -c "echo ' + t.replace('"', '\\"') + '"',
    "url": lambda t: "curl 'https://example.org/?key=" + urllib.parse.quote(t, safe="") + "'",
    "url-every-byte": _url_all,
}
"""Every escaping the tool reads, applied to the text that holds a secret."""


def leaks(text: str, secret: str) -> list[str]:
    """The forms of ``secret`` (as written, and in every escaping) found in ``text``."""
    return [name for name, enc in ENCODINGS.items() if _escaped_alone(secret, enc) in text]


def _escaped_alone(secret: str, encoded: Callable[[str], str]) -> str:
    """``secret`` as ``encoded`` writes it, without the text around it."""
    empty, full = encoded(""), encoded(secret)
    start = 0
    while start < len(empty) and start < len(full) and empty[start] == full[start]:
        start += 1
    end = 0
    while end < len(empty) - start and empty[-1 - end] == full[-1 - end]:
        end += 1
    return full[start : len(full) - end]


@settings(max_examples=60, deadline=None)
@given(
    shape=st.sampled_from(sorted(SHAPES)),
    encoding=st.sampled_from(sorted(ENCODINGS)),
    data=st.data(),
    before=st.sampled_from(["", "key: ", "OUT=", "\n", "[", "x "]),
    after=st.sampled_from(["", " done", "\n", "'", ";"]),
)
def test_every_shape_in_every_escaping_is_redacted(
    shape: str, encoding: str, data: st.DataObject, before: str, after: str
) -> None:
    secret = data.draw(SHAPES[shape])
    written = ENCODINGS[encoding](before + secret + after)
    redacted = redact(written)
    assert MARK in redacted
    assert not leaks(redacted, secret), (shape, encoding, written, redacted)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(NAMED)), encoding=st.sampled_from(sorted(ENCODINGS)), data=st.data())
def test_every_named_secret_in_every_escaping_is_redacted(
    name: str, encoding: str, data: st.DataObject
) -> None:
    value = data.draw(NAMED_VALUES[name])
    written = ENCODINGS[encoding](NAMED[name](value))
    redacted = redact(written)
    assert MARK in redacted
    assert not leaks(redacted, value), (name, encoding, written, redacted)


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_private_key_blocks_are_redacted_whole(encoding: str) -> None:
    body = ["MIIEowIBAAKCAQEA0Zk3x9", "Qm8+Tz/Yc2Lk1Hw4Ej7Rb==", "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op"]
    block = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END OPENSSH PRIVATE KEY-----"
    redacted = redact(ENCODINGS[encoding]("key:\n" + block + "\nafter"))
    for line in body:
        assert not leaks(redacted, line), redacted
    assert _escaped_alone("after", ENCODINGS[encoding]) in redacted


def test_a_redacted_file_keeps_its_lines() -> None:
    text = "a = 1\n-----BEGIN PRIVATE KEY-----\nMIIB1\nQm8+\n-----END PRIVATE KEY-----\nb = 2\n"
    assert redact(text).splitlines()[-1] == "b = 2"
    assert redact(text).count("\n") == text.count("\n")


# not "shell": a quote inside single quotes is written '"'"', which no reader of the file decodes
@pytest.mark.parametrize("encoding", sorted(set(ENCODINGS) - {"shell"}))
def test_every_value_of_a_dotenv_file_is_redacted(encoding: str) -> None:
    env = "DB_PASS=hunter2x\nexport SERVICE_KEY='q9Zr'\nMODEL=qwen # the model\n"
    redacted = redact(ENCODINGS[encoding](env), env_file=True)
    for value in ("hunter2x", "q9Zr", "qwen"):
        assert not leaks(redacted, value), redacted
    if not encoding.startswith("url"):  # in a URL the whole query is a value of the file
        assert _escaped_alone("DB_PASS", ENCODINGS[encoding]) in redacted


def test_a_dotenv_file_is_known_by_its_path_or_the_command_that_shows_it() -> None:
    record = [
        Command(1, "cat .env", "Bash", output_excerpt="DB_PASS=hunter2x"),
        Command(2, "cat notes.txt", "Bash", output_excerpt="DB_PASS=hunter2x"),
    ]
    commands = redact_fields(record)
    assert [c.output_excerpt for c in commands] == [f"DB_PASS={MARK}", "DB_PASS=hunter2x"]
    pointers = redact_fields([Evidence("file", path="deploy/.env", excerpt="PASS=abc")])
    assert pointers[0].excerpt == f"PASS={MARK}"
    assert redact_all({"path": ".env", "excerpt": "A=b"}) == {"path": ".env", "excerpt": f"A={MARK}"}


SHA1 = "3f2a9c1d0b8e7f6a5d4c3b2a1f0e9d8c7b6a5f4e"
SHA256 = "9b74c9897bac770ffc029102a200c5de2f3e1a0b8c4d5e6f7a8b9c0d1e2f3a4b"


@pytest.mark.parametrize(
    "text",
    [
        f"git checkout {SHA1}",
        f'{{"blob_sha": "{SHA1}", "artifact_id": "{SHA256}", "record_hash": "{SHA256}"}}',
        f"sha256:{SHA256}",
        f"commit {SHA1}\\nAuthor: agent",
        f"revision @{SHA1[:7]} of code/train.py",
        f"content id {SHA256} (blake3)",
        "run 0199aa00-demo-4b1e-9c3f-7d2a6e5b8c10",
        f"https://huggingface.co/Qwen/Qwen2.5-1.5B/resolve/{SHA1}/model.safetensors?download=true%20x",
        "path: /data/rl_files/models/Qwen/Qwen2.5-1.5B-Instruct/tokenizer.json",
        "pad_token = tokenizer.eos_token",
        'HF_TOKEN = os.environ.get("HF_TOKEN")',
        "from hub import hf_hubdownloadwithprogressbarandretries",
        "max_tokens: 100000000",
        "loss 0.61 at step 1200, lr=2e-5, 45% done",
        "it said the password is wrong",
        "Bearer authentication failed",
    ],
)
def test_hashes_ids_and_code_stay(text: str) -> None:
    assert redact(text) == text
    assert redact(text, env_file=False) == text


@given(st.text(max_size=300))
def test_redaction_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@given(st.text(alphabet=HEX, min_size=40, max_size=64), st.sampled_from(list(ENCODINGS.values())))
def test_hex_digests_in_any_escaping_stay(digest: str, encoded: Callable[[str], str]) -> None:
    text = encoded(f"sha {digest} ok")
    assert redact(text) == text
