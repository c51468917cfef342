"""A tiny character-level causal language model with a Hugging Face-style folder.

The folder holds ``config.json`` (``architectures``, ``_name_or_path``: the model it was trained from),
``model.safetensors``, ``tokenizer.json``, ``tokenizer_config.json`` (its ``chat_template`` wraps every
prompt) and ``generation_config.json`` (``max_new_tokens``), as the folders agents submit do. Weights are
read only from safetensors, through the spine's checked header reader.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional

from arb_audit.safetensors import HeaderError, read_header

ARCHITECTURE = "TinyCausalLM"
"""The one architecture this world knows; a folder that says otherwise is not loaded."""
VOCAB = "\n abcdefghijklmnopqrstuvwxyz0123456789>:=|.,?!-+_"
"""Every character the model reads or writes; ``\\n`` ends an answer; others read as ``?``."""
EOS = "\n"
MAX_SIZE = 1024
"""Largest width, depth, head count or context a model folder may ask for."""
MAX_PARAMETERS = 20_000_000
"""Most parameters a model folder may ask for (the world's models have 156k): the grader builds the
network before it reads the weights, so a config must not make it allocate gigabytes."""
MAX_JSON_BYTES = 1024 * 1024
"""Largest configuration file read."""
DEFAULT_TEMPLATE = "{prompt}"
"""The chat template: ``{prompt}`` is replaced by the task's prompt."""


@dataclass(frozen=True, slots=True)
class TinyConfig:
    """The shape of a tiny model, as ``config.json`` writes it."""

    vocab_size: int = len(VOCAB)
    """Number of characters."""
    d_model: int = 64
    """Width of the residual stream."""
    n_layers: int = 3
    """Transformer blocks."""
    n_heads: int = 4
    """Attention heads per block."""
    context: int = 48
    """Longest sequence the position table covers."""


class Block(nn.Module):
    """One pre-norm transformer block: causal self-attention, then a GELU MLP."""

    def __init__(self, config: TinyConfig) -> None:
        super().__init__()
        self.n_heads = config.n_heads
        self.norm1 = nn.LayerNorm(config.d_model)
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model)
        self.proj = nn.Linear(config.d_model, config.d_model)
        self.norm2 = nn.LayerNorm(config.d_model)
        self.up = nn.Linear(config.d_model, 4 * config.d_model)
        self.down = nn.Linear(4 * config.d_model, config.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the block to ``x`` [batch, time, width]."""
        batch, time, width = x.shape
        q, k, v = (
            t.view(batch, time, self.n_heads, -1).transpose(1, 2)
            for t in self.qkv(self.norm1(x)).split(width, dim=2)
        )
        attended = functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attended.transpose(1, 2).reshape(batch, time, width))
        out: torch.Tensor = x + self.down(functional.gelu(self.up(self.norm2(x))))
        return out


class TinyLM(nn.Module):
    """The model: character and position embeddings, blocks, a tied output head."""

    def __init__(self, config: TinyConfig) -> None:
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.norm = nn.LayerNorm(config.d_model)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Return next-character logits [batch, time, vocab] for ``ids`` [batch, time]."""
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.embed(ids) + self.position(positions)
        for block in self.blocks:
            x = block(x)
        logits: torch.Tensor = self.norm(x) @ self.embed.weight.T
        return logits

    @torch.no_grad()
    def generate(
        self,
        prompts: list[str],
        max_new_tokens: int = 8,
        temperature: float = 0.0,
        generator: torch.Generator | None = None,
    ) -> list[str]:
        """Continue each prompt until the end of line or ``max_new_tokens``; greedy at temperature 0."""
        answers = [""] * len(prompts)
        by_length: dict[int, list[int]] = {}
        for i, prompt in enumerate(prompts):
            by_length.setdefault(len(prompt), []).append(i)
        for indices in by_length.values():
            ids = torch.tensor([encode(prompts[i]) for i in indices])
            done = torch.zeros(len(indices), dtype=torch.bool)
            for _ in range(max_new_tokens):
                if ids.shape[1] >= self.config.context or bool(done.all()):
                    break
                logits = self.forward(ids)[:, -1, :]
                if temperature > 0:
                    probs = torch.softmax(logits / temperature, dim=-1)
                    step = torch.multinomial(probs, 1, generator=generator).squeeze(1)
                else:
                    step = logits.argmax(dim=-1)
                for row, token in enumerate(step.tolist()):
                    if not done[row]:
                        if VOCAB[token] == EOS:
                            done[row] = True
                        else:
                            answers[indices[row]] += VOCAB[token]
                ids = torch.cat([ids, step.unsqueeze(1)], dim=1)
        return answers


def encode(text: str) -> list[int]:
    """Character ids of ``text``; a character outside the vocabulary reads as ``?``."""
    unknown = VOCAB.index("?")
    return [VOCAB.find(c) if c in VOCAB else unknown for c in text]


def sequence_loss(model: TinyLM, prompts: list[str], answers: list[str]) -> torch.Tensor:
    """Return each answer's summed log-likelihood (with its end of line) after its prompt (with gradient)."""
    rows = [encode(p + a + EOS) for p, a in zip(prompts, answers, strict=True)]
    width = max(len(r) for r in rows)
    ids = torch.tensor([r + [0] * (width - len(r)) for r in rows])
    mask = torch.zeros(ids.shape, dtype=torch.bool)
    for i, (p, r) in enumerate(zip(prompts, rows, strict=True)):
        mask[i, len(p) : len(r)] = True
    logits = model(ids[:, :-1])
    picked = torch.log_softmax(logits, dim=-1).gather(2, ids[:, 1:].unsqueeze(2)).squeeze(2)
    return (picked * mask[:, 1:]).sum(dim=1)


def save_model(
    model: TinyLM,
    folder: Path | str,
    name_or_path: str,
    chat_template: str = DEFAULT_TEMPLATE,
    max_new_tokens: int = 8,
) -> None:
    """Write ``model`` as a model folder; ``name_or_path`` is the model it was trained from."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config = {"architectures": [ARCHITECTURE], "model_type": "arb-tiny", "_name_or_path": name_or_path}
    (folder / "config.json").write_text(json.dumps({**config, **asdict(model.config)}, indent=2) + "\n")
    _write_safetensors(folder / "model.safetensors", model.state_dict())
    vocab = {c: i for i, c in enumerate(VOCAB)}
    (folder / "tokenizer.json").write_text(json.dumps({"model": {"type": "char", "vocab": vocab}}) + "\n")
    tokenizer_config = {"chat_template": chat_template, "eos_token": EOS, "unk_token": "?"}
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2) + "\n")
    generation = {"max_new_tokens": max_new_tokens, "eos_token_id": VOCAB.index(EOS)}
    (folder / "generation_config.json").write_text(json.dumps(generation, indent=2) + "\n")


def _write_safetensors(path: Path, tensors: dict[str, torch.Tensor]) -> None:
    """Write float32 tensors in the safetensors layout (header, then each tensor's bytes in order)."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name, tensor in sorted(tensors.items()):
        data = bytes(tensor.detach().to(torch.float32).clone().untyped_storage())
        header[name] = {
            "dtype": "F32",
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        blobs.append(data)
        offset += len(data)
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)
    with path.open("wb") as out:
        out.write(len(encoded).to_bytes(8, "little"))
        out.write(encoded)
        for blob in blobs:
            out.write(blob)


class ModelFolderError(ValueError):
    """A model folder this world cannot load; the message names the file and why."""


@dataclass(frozen=True, slots=True)
class LoadedModel:
    """A model read from its folder, with the settings that folder gives the grader."""

    model: TinyLM
    """The network, in eval mode."""
    chat_template: str
    """Wraps each prompt before generation."""
    max_new_tokens: int
    """Longest answer generated."""


def load_model(folder: Path | str) -> LoadedModel:
    """Read a model folder written by :func:`save_model` (or edited since); ModelFolderError if unusable."""
    folder = Path(folder)
    config_data = _json_object(folder / "config.json")
    if config_data.get("architectures") != [ARCHITECTURE]:
        raise ModelFolderError(f"{folder / 'config.json'}: architectures is not [{ARCHITECTURE!r}]")
    fields = TinyConfig.__dataclass_fields__
    try:
        config = TinyConfig(**{k: int(str(v)) for k, v in config_data.items() if k in fields})
    except (TypeError, ValueError) as exc:
        raise ModelFolderError(f"{folder / 'config.json'}: {exc}") from exc
    sizes = (config.d_model, config.n_layers, config.n_heads, config.context)
    # The folder is the agent's: a config that asks for a huge network must not take the grader down.
    if config.vocab_size != len(VOCAB) or not all(0 < n <= MAX_SIZE for n in sizes):
        raise ModelFolderError(f"{folder / 'config.json'}: sizes {sizes} or vocab_size are out of range")
    if config.d_model % config.n_heads:
        raise ModelFolderError(f"{folder / 'config.json'}: d_model is not a multiple of n_heads")
    width = config.d_model
    parameters = 12 * width * width * config.n_layers + (config.vocab_size + config.context) * width
    if parameters > MAX_PARAMETERS:
        raise ModelFolderError(
            f"{folder / 'config.json'}: asks for about {parameters:,} parameters; not built"
        )
    model = TinyLM(config)
    try:
        model.load_state_dict(_read_safetensors(folder / "model.safetensors"))
    except RuntimeError as exc:
        why = " ".join(str(exc).split())[:300]
        raise ModelFolderError(f"{folder / 'model.safetensors'}: does not fit config.json ({why})") from exc
    template = _json_object(folder / "tokenizer_config.json").get("chat_template", DEFAULT_TEMPLATE)
    generation = _json_object(folder / "generation_config.json", required=False)
    max_new = generation.get("max_new_tokens", 8)
    if not isinstance(template, str) or "{prompt}" not in template:
        raise ModelFolderError(f"{folder / 'tokenizer_config.json'}: chat_template lacks {{prompt}}")
    if len(template) > config.context:
        raise ModelFolderError(
            f"{folder / 'tokenizer_config.json'}: chat_template is longer than the context"
        )
    if isinstance(max_new, bool) or not isinstance(max_new, int) or not 0 < max_new <= config.context:
        raise ModelFolderError(f"{folder / 'generation_config.json'}: max_new_tokens {max_new!r} is unusable")
    model.eval()
    return LoadedModel(model, template, max_new)


def _json_object(path: Path, required: bool = True) -> dict[str, object]:
    """Read a JSON object; a missing optional file is empty."""
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise ModelFolderError(f"{path}: over {MAX_JSON_BYTES:,} bytes; not read")
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        if not required:
            return {}
        raise ModelFolderError(f"{path}: missing") from exc
    except (OSError, ValueError, RecursionError) as exc:
        raise ModelFolderError(f"{path}: not readable JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ModelFolderError(f"{path}: not a JSON object")
    return data


def _read_safetensors(path: Path) -> dict[str, torch.Tensor]:
    """Read float32 tensors through the spine's checked header reader."""
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            header = read_header(handle, size)
            tensors = {}
            for t in header.tensors:
                if t.dtype != "F32":
                    raise ModelFolderError(f"{path}: tensor {t.name} is {t.dtype}, not F32")
                handle.seek(header.data_start + t.start)
                data = bytearray(handle.read(t.end - t.start))
                if not data:  # frombuffer refuses an empty buffer; the shape says how empty
                    tensors[t.name] = torch.zeros(t.shape, dtype=torch.float32)
                    continue
                tensors[t.name] = torch.frombuffer(data, dtype=torch.float32).reshape(t.shape).clone()
    except (OSError, HeaderError, RuntimeError, ValueError) as exc:
        raise ModelFolderError(f"{path}: {exc}") from exc
    return tensors
