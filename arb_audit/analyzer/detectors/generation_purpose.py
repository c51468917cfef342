"""What a model's outputs are for: a benchmark's answers, or data to train on."""

from __future__ import annotations

import itertools
import re

import libcst as cst

from arb_audit.analyzer.calls import delegates
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid, keyword
from arb_audit.analyzer.detectors.data_output import (
    DATASET_WRITERS,
    holds_model,
    opens_for_writing,
    records_writer,
)
from arb_audit.analyzer.loss_slice import TEACHER_WORDS, words
from arb_audit.analyzer.names import last_name, literal_text
from arb_audit.analyzer.walk import descendants

ANSWERS = "answers"
"""Variant of a ``purpose`` finding: what the file generates answers held-out questions (an evaluation)."""
TRAINING_DATA = "training_data"
"""Variant of a ``purpose`` finding: what the file generates is made to be trained on."""
FILE_BUILDERS = frozenset({"json", "csv", "parquet", "text", "arrow", "pandas", "webdataset"})
"""datasets' builders of local files, named as a ``load_dataset`` call's first argument."""
TRAINING_SHAPED = "training_shaped"
"""Variant of a ``purpose`` finding: the file reads a training split or builds records shaped for
training (conversations), which a demo or an evaluation may do too: data only when written."""

HELD_OUT_SPLITS = frozenset({"test", "validation", "valid", "val", "dev", "eval", "evaluation"})
"""First words of a dataset split kept out of training (``test``, ``test_gen``, ``validation``)."""
TRAIN_SPLITS = frozenset({"train"})
"""First word of a training split (``train``, ``train_sft``): prompts taken from it are answered to make
training data."""
SPLIT_KEYS = frozenset({"train", "test", "validation"})
"""Keys of a dataset dictionary that name nothing but a split (``ds["test"]``)."""
BENCHMARK_WORDS = frozenset({"bench", "benchmark", "benchmarks"})
"""Words of a name that holds a benchmark (``bench_name``, ``benchmark_dir``)."""
ANSWER_NAMES = frozenset(
    {
        *(("answer", "file"), ("answers", "file"), ("model", "answer"), ("model", "answers")),
        *(("question", "file"), ("questions", "file"), ("eval", "set"), ("test", "set")),
        *(("eval", "data"), ("test", "data"), ("eval", "questions"), ("test", "questions")),
        *(("eval", "prompts"), ("test", "prompts"), ("eval", "dataset"), ("test", "dataset")),
        # (not "test_file": a unit test's file, where a code reward runs its tests)
        *(("eval", "file"), ("eval", "path"), ("eval", "files")),
    }
)
"""Two words in a row of a name for a benchmark's questions or a model's answers to them (``answer_file``,
``eval_set``): the file answers held-out questions for a judge or a metric."""
HELD_OUT_QUESTIONS = frozenset(
    (split, what)
    for split in HELD_OUT_SPLITS
    for what in ("prompts", "questions", "problems", "queries", "instructions")
)
"""The last two words of a file's name that hold a held-out split's questions (``test_prompts.json``);
not ``test_cases.json``, unit tests."""
PREDICTION_WORDS = frozenset({"prediction", "predictions"})
"""Words of a name for a model's answers to be scored (``predictions``)."""
PREDICTION_KEY_WORDS = PREDICTION_WORDS | {"pred", "preds", "predicted"}
"""Words of a record's key for the model's answer to a question (``pred``, ``predicted_answer``)."""
TRUTH_KEY_WORDS = frozenset(
    {"gold", "truth", "gt", "reference", "ref", "label", "target", "expected", "correct"}
)
"""Words of a record's key for the answer a prediction is checked against, or the check's verdict
(``gold``, ``ground_truth``, ``is_correct``)."""
DATA_WORDS = TEACHER_WORDS | {"distilled", "synthetic"}
"""Words of a name that says a model's outputs become training data (``teacher_model``, ``distilled``)."""
MAKING_VERBS = frozenset({"generate", "synthesize"})
MAKERS = frozenset({"generator", "generators", "synthesizer", "synthesizers"})
DATASET_WORDS = frozenset({"dataset", "datasets"})
"""A name made of a making verb first or a maker last, and a dataset (``generate_dataset``,
``PreferenceDatasetGenerator``), says the model's outputs are made into a dataset (a benchmark's
questions are not one the file makes; ``load_dataset_for_generation`` makes none)."""
ANSWER_PATH_WORDS = frozenset(
    {
        *("answer", "answers", "prediction", "predictions", "preds", "eval", "evaluation", "evals"),
        *("bench", "benchmark", "judgment", "judgments", "leaderboard", "testset"),
    }
)
"""Words of a written file's literal name that say it holds a model's answers (``model_answer/``)."""
DATA_PATH_WORDS = frozenset(
    {
        *("train", "sft", "dpo", "generated", "synthetic", "synth", "distill", "distilled"),
        *("instructions", "questions", "trajectories", "conversations", "sharegpt", "alpaca"),
    }
)
"""Words of a written file's literal name that say it holds data to train on (``generated_questions``)."""
MODEL_OUTPUT_WORDS = frozenset({"outputs", "output", "results", "completions", "responses", "generations"})
"""Words of a file's name for a model's outputs as such: "generated" beside them names no data set."""
TRACE_WORDS = frozenset({"traces", "rationales"})
"""Words of a written file's own name (not its folder's) that say it holds a model's reasoning, to
train on (``r1_gsm8k_traces.jsonl``), unless the path says profiling (see PROFILING_WORDS)."""
PROFILING_WORDS = frozenset(
    {"profile", "profiler", "profiling", "latency", "chrome", "otel", "timing", "perf"}
)
"""Words of a path of a profiler's or a tracer's output (``traces/latency_summary.json``)."""
WRITTEN_SETTING_WORDS = frozenset({"output", "out", "outfile", "save", "dump", "dest"})
"""Words of an option or parameter naming a file written (``--output_file``, ``save_path``)."""
FILE_FORMAT_WORDS = frozenset({"csv", "tsv", "json", "jsonl", "parquet"})
"""Words of an option naming a file by its format (``--core-csv``, ``--eval_jsonl``)."""
FILE_SETTING_WORDS = frozenset(
    {*WRITTEN_SETTING_WORDS, *FILE_FORMAT_WORDS, "input", "infile", "path", "file"}
)
"""Words of an option or parameter naming a file (``input_data_path``): the name of its default says
what goes in (a benchmark's questions, only) or comes out."""
READ_SETTING_WORDS = frozenset(
    {"input", "infile", "in", "data", "dataset", "source", "src", *FILE_FORMAT_WORDS}
)
"""Words of an option naming a file of data read (``--infile``, ``--data_path``, ``--core-csv``; not
``--log_file``)."""
MAX_CUES = 16
"""Most cues one file reports (distinct ones: enough to weigh, few enough to place and show)."""
SPLIT_OPTION = re.compile(r"-*split")
"""A command-line option choosing a split (``--split``, ``-split``)."""


READ_CALLS = frozenset(
    {"read_json", "read_csv", "read_parquet", "read_jsonl", "load_json", "load_jsonl", "read_jsonlines"}
    | {"load_jsonlines", "read_text"}
)
"""Calls that read a file handed first, or the path they are called on (``pd.read_json(path)``,
``(root / "validation.jsonl").read_text()``)."""
CHECK_WORDS = frozenset({"correct", "right", "match", "matches", "matched", "verified", "passed", "solved"})
"""Words of a name holding whether an answer was right (``is_correct``)."""
ANSWER_KEY_WORDS = PREDICTION_KEY_WORDS | TRUTH_KEY_WORDS | {"answer", "answers", "solution", "extracted"}
"""Words of what an answer check compares (``pred == gold``, ``extract(o) == row["answer"]``)."""


MAX_PATHS = 8
"""Path literals kept per name (a hostile file may assign one name a million times)."""


def _tail_literal(path: cst.BaseExpression) -> str | None:
    """Return the literal end of a path expression: its file's name, where the code writes it."""
    if type(path) is cst.Call and path.args:
        return _tail_literal(path.args[-1].value)  # os.path.join(root, "test.jsonl"), Path("x")
    if type(path) is cst.BinaryOperation and isinstance(path.operator, cst.Divide | cst.Add):
        return _tail_literal(path.right)  # root / "validation.jsonl", root + "/test.json"
    if type(path) is cst.SimpleString:
        return literal_text(path)
    if type(path) is cst.FormattedString and path.parts and type(path.parts[-1]) is cst.FormattedStringText:
        return path.parts[-1].value
    return None


PATH_JOINS = frozenset(
    {"join", "joinpath", "Path", "PurePath", "PosixPath", "PurePosixPath", "WindowsPath", "PureWindowsPath"}
)
"""Calls that build a path from parts, the file's name last (``os.path.join(root, "test.jsonl")``)."""


def _joined_path(value: cst.BaseExpression) -> bool:
    """Say whether a value is a path joined from parts ending in a literal (``ROOT / "test.parquet"``).

    Only joins: another call's last literal argument (``ds.filter("test")``) is no path. The literal
    end is :func:`_tail_literal`'s.
    """
    joins = type(value) is cst.BinaryOperation or (
        type(value) is cst.Call and last_name(value.func) in PATH_JOINS
    )
    return joins and _tail_literal(value) is not None


NOT_BENCHMARKS = frozenset({"workbench", "workbenches"})
"""Words ending in "bench" that name no benchmark."""


def _split_file(path: cst.BaseExpression) -> tuple[str, str] | None:
    """Return the cue, ``(message, variant)``, of a path literal whose file's name says its split.

    The split is the name's last word (``gsm8k_test.jsonl``, ``toolbench_train.json``), or else a
    benchmark's name is in it (``longbench.json``, ``longbench_v2.json``).
    """
    tail = _tail_literal(path)
    if tail is None:
        return None
    name = tail.replace("\\", "/").rsplit("/", 1)[-1].lower()
    said = re.findall(r"[a-z]+", name.rsplit(".", 1)[0] if "." in name else name)
    if said and said[-1] in HELD_OUT_SPLITS and not set(said) & TRAIN_SPLITS:
        return f"reads a held-out split's file ({name})", ANSWERS
    if len(said) >= 2 and tuple(said[-2:]) in HELD_OUT_QUESTIONS and not set(said) & TRAIN_SPLITS:
        return f"reads a held-out split's questions ({name})", ANSWERS  # (``test_prompts.json``)
    if said and said[-1] in TRAIN_SPLITS:
        return f"reads a training split's file ({name})", TRAINING_SHAPED
    if any(w.endswith("bench") and w not in NOT_BENCHMARKS for w in said) or BENCHMARK_WORDS & set(said):
        return f"reads a benchmark's file ({name})", ANSWERS  # (``longbench.json``, ``mt_bench.jsonl``)
    return None


def _ends_sequence(node: cst.BaseExpression) -> bool:
    """Say whether an operand is a tokenizer's end-of-sequence token (``tokenizer.eos_token``).

    Ending a text built from others (``prompt + " [/INST] " + prediction + tokenizer.eos_token``), it
    makes a sequence a model is taught to end: a training example. A prompt to answer ends with no such
    token; a stop string handed to sampling (``stop=[tok.eos_token]``) is no text built.
    """
    return type(node) is cst.Attribute and node.attr.value == "eos_token"


def _holds_text(node: cst.BaseExpression) -> bool:
    """Say whether an expression holds a text of the program's (a name, a call, a row's field).

    Not only literals: ``"eos=" + tok.eos_token`` shows the token, it ends no text.
    """
    return any(
        type(n) is cst.Name and n.value not in ("str", "repr") for n in (node, *descendants(node))
    ) and not _ends_sequence(node)


PROMPT_WORDS = frozenset(
    {"prompt", "prompts", "prefix", "shot", "shots", "demo", "demos", "fewshot", "context"}
)
"""Words of a name holding a prompt to be answered (few-shot demonstrations joined by the token)."""
SHOWN_BY = frozenset(
    {"print", "info", "debug", "warning", "warn", "error", "log", "write_log", "set_description"}
)
"""Calls that show a line to a person (a log, a progress bar)."""


class GenerationPurpose(RouteDetector):
    """What a file that runs a model makes: answers to held-out questions, or data to train on.

    Both generate and write; what they read and how they name it differs. Answers come from a test or
    validation split, a benchmark's questions, into answer or prediction files; training data from a
    teacher, a training split, into conversations or preference pairs. Each cue is a ``purpose``
    finding (variant :data:`ANSWERS` or :data:`TRAINING_DATA`); the file's role weighs them only when
    it trains nothing (TAXONOMY.md: ``eval`` versus ``data_generation``). Names are read where
    assignments, parameters, classes, functions and command-line options bind them, never in comments.
    """

    READS_INERT_CALLS = True  # (the names handed to any call: ``isinstance(t, lm_eval.Task)``)
    TRIGGERS = (
        *("split", "test", "valid", "eval", "bench", "answer", "question", "pred"),
        *(
            "teacher",
            "distill",
            "Distill",
            "synthetic",
            "conversations",
            "chosen",
            "open(",
            "DatasetGenerator",
            "_dataset",
        ),
        *("add_argument", *sorted(DATASET_WRITERS)),
        *("read_json", "read_csv", "read_parquet", "read_text", "load_json"),
        "eos_token",
    )

    VALID = (
        # a name set to a held-out split's file, then to a training one: neither is said
        Valid(
            "fname = 'data/test.json'\nif not os.path.exists(fname):\n    fname = 'data/train.json'\n"
            "with open(fname) as f:\n    rows = json.load(f)\n"
        ),
        Valid("import torch\ntorch.backends.cudnn.benchmark = False\nouts = llm.generate(prompts)\n"),
        # a model's outputs called generated: no data set is named
        Valid(
            "outs = llm.generate(prompts)\n"
            "with open('generated_outputs.json', 'w') as f:\n    json.dump(outs, f)\n"
        ),
        # the one split datasets makes of local files, whatever they hold
        Valid(
            "from datasets import load_dataset\n"
            "items = load_dataset('parquet', data_files=args.dataset_path)['train']\n"
            "ds = load_dataset('json', data_files=[path])\nrows = ds['train']\n"
            "outs = llm.generate(items)\n"
        ),
        Valid(
            "class WithValueHead(nn.Module):\n    def push_to_hub(self, *args, **kwargs):\n"
            "        return self.pretrained_model.push_to_hub(*args, **kwargs)\n"
        ),
        Valid("ds = load_dataset(name, split='train[:10]')\nx = 1\n"),
        Valid("import json\nresults = json.load(open('results.json'))\n"),
        Valid("def answer(question):\n    return question\n"),
        Valid("def load_dataset_for_generation(path):\n    return path\n"),
        Valid("def create_dataset(path, split='test'):\n    return path\n"),
        Valid("test_file = os.path.join(workdir, 'test_solution.py')\n"),
        # a name bound and never read: a leftover says nothing of what the file does
        Valid("eval_path = 'data/dev.jsonl'\nouts = llm.generate(prompts)\n"),
        Valid("record = {'prompt': p, 'response': r}\n"),
        Valid("record = {'prompt': p, 'response': r, 'label': y}\n"),
        Valid("record = {'pred': p, 'step': i}\n"),
        Valid("latest = ckpts['latest']\n"),
        Valid("loss = metrics['eval']\n"),
        Valid("model.push_to_hub('me/model')\n"),
        Valid("with open('data/generated_answers.json', 'w') as f:\n    f.write(line)\n"),
        Valid("with open('train_data.json') as f:\n    rows = f.read()\n"),
        Valid("with open('test/prompts.json') as f:\n    rows = f.read()\n"),
        Valid("with open(f'{out}/contest.json') as f:\n    rows = f.read()\n"),
        Valid(
            "cases = json.load(open('data/test_cases.json'))\nsplits = load_json('train_val_split.json')\n"
        ),
        Valid(
            "if pred == gold:\n    kept.append({'q': q, 'predicted_answer': pred, 'target_answer': gold})\n"
        ),
        Valid("rows.append({'text': t, 'predicted_label': y})\n"),
        Valid("with (out_dir / 'test.json').open('w') as f:\n    f.write(line)\n"),
        # a profiler's traces; a log file's option (no data read from it)
        Valid("with open('traces/latency_summary.json', 'w') as f:\n    f.write(s)\n"),
        Valid("with open('profile/chrome_traces.json', 'w') as f:\n    f.write(s)\n"),
        Valid(
            "for q, o in zip(qs, outs):\n    if extract(o) == q['answer']:\n"
            "        keep.append({'question': q, 'pred': extract(o), 'gold': q['answer']})\n"
        ),
        Valid("parser.add_argument('--input_file', default='data/questions.jsonl')\n"),
        Valid("# evaluate on the test set: answer_file\nmodel.generate(x)\n"),
        # the end-of-sequence token handed to sampling as a stop string, or compared: no text built
        Valid("params = SamplingParams(stop=[tokenizer.eos_token], n=4)\nouts = llm.generate(p, params)\n"),
        Valid("if out.endswith(tok.eos_token):\n    out = out[: -len(tok.eos_token)]\n"),
        # few-shot demonstrations joined into a prompt; the token shown in a log line; a separator
        Valid("prefix = ''.join('Q: ' + s['q'] + ' A: ' + s['a'] + tok.eos_token for s in shots)\n"),
        Valid("log.info('bos=' + str(tok.bos_token) + ' eos=' + tok.eos_token)\n"),
        Valid("log.info(f'eos={tok.eos_token}')\nprint(f'{name}: {tok.eos_token}')\n"),
        Valid("text = shot + tok.eos_token + question\n"),
    )
    INVALID = (
        Invalid(
            "out = model.generate_sentence(prompt)\n"
            "text = '[INST] ' + prompt + ' [/INST] ' + out + tokenizer.eos_token\n",
            "purpose",
            variant=TRAINING_SHAPED,
        ),
        Invalid(
            "row = {'text': f'{prompt}{completion}{tok.eos_token}'}\n", "purpose", variant=TRAINING_SHAPED
        ),
        Invalid("ds = load_dataset(name, split='test')\n", "purpose", variant=ANSWERS),
        Invalid("rows = dataset['validation']\n", "purpose", variant=ANSWERS),
        # files given by split make those splits; a name bound again to a hub dataset is that dataset
        Invalid(
            "ds = load_dataset('json', data_files={'train': 'tr.jsonl', 'test': 'te.jsonl'})['train']\n",
            "purpose",
            variant=TRAINING_SHAPED,
        ),
        Invalid(
            "ds = load_dataset('json', data_files=path)\nds = load_dataset('openai/gsm8k', 'main')\n"
            "rows = ds['train']\n",
            "purpose",
            variant=TRAINING_SHAPED,
        ),
        # a hub dataset's training split, taken by its key
        Invalid("rows = load_dataset('openai/gsm8k', 'main')['train']\n", "purpose", variant=TRAINING_SHAPED),
        # a held-out split's file opened through the name each branch sets it to
        Invalid(
            "if args.input == 'mmcu':\n    fname = './raw/mmcu/test.json'\nelse:\n    fname = './x.json'\n"
            "with open(fname) as f:\n    rows = json.load(f)\n",
            "purpose",
            variant=ANSWERS,
        ),
        Invalid("ds = load_dataset(name, split='train_sft')\n", "purpose", variant=TRAINING_SHAPED),
        Invalid("parser.add_argument('--split', default='test_gen')\n", "purpose", variant=ANSWERS),
        Invalid("parser.add_argument('--eval_file', required=True)\n", "purpose", variant=ANSWERS),
        # an input option whose default is a name bound to a held-out split's file, joined from parts
        Invalid(
            "DEFAULT_INPUT = ROOT / 'data' / 'parquet' / 'test.parquet'\n"
            "parser.add_argument('--input-file', type=Path, default=DEFAULT_INPUT)\n",
            "purpose",
            variant=ANSWERS,
        ),
        # an option named for a file by its format, its default a held-out split's file
        Invalid(
            "parser.add_argument('--core-csv', default='data/persona/eval/hallucination_eval.csv')\n",
            "purpose",
            variant=ANSWERS,
        ),
        Invalid(
            "prompts = json.load(open(f'{HOME}/datasets/alpacafarm/test/test_prompts.json'))\n",
            "purpose",
            variant=ANSWERS,
        ),
        Invalid("parser.add_argument('--bench-name', default='mt_bench')\n", "purpose", variant=ANSWERS),
        Invalid(
            "answer_file = os.path.join(out, 'model_answer.jsonl')\nwith open(answer_file, 'w') as f:\n"
            "    f.write(text)\n",
            "purpose",
            variant=ANSWERS,
        ),
        Invalid(
            "eval_path = 'data/dev.jsonl'\nrows = load(eval_path)\nouts = llm.generate(rows)\n",
            "purpose",
            variant=ANSWERS,
        ),
        Invalid("def run(eval_set, model):\n    pass\n", "purpose", variant=ANSWERS),
        Invalid(
            "class PreferenceDatasetGenerator:\n    def generate(self, docs):\n        return docs\n",
            "purpose",
            variant=TRAINING_DATA,
        ),
        Invalid("predictions = []\npredictions.append(out)\n", "purpose", variant=ANSWERS),
        Invalid("rows.append({'q': q, 'pred': p, 'gold': a})\n", "purpose", variant=ANSWERS),
        Invalid(
            "with open(f'datasets/{name}/test.json') as f:\n    rows = f.read()\n", "purpose", variant=ANSWERS
        ),
        Invalid("rows = json.load(open('data/gsm8k_test.jsonl'))\n", "purpose", variant=ANSWERS),
        Invalid("ipts = json.load(open('longbench.json'))\n", "purpose", variant=ANSWERS),
        Invalid("ipts = json.load(open('data/longbench_v2.json'))\n", "purpose", variant=ANSWERS),
        Invalid("rows = json.load(open('data/toolbench_train.json'))\n", "purpose", variant=TRAINING_SHAPED),
        Invalid(
            "json.dump(rows, open('out/r1_gsm8k_traces.jsonl', 'w'))\n", "purpose", variant=TRAINING_DATA
        ),
        Invalid(
            "parser.add_argument('--infile', type=str, default='artifacts/gsm8k/train.jsonl')\n",
            "purpose",
            variant=TRAINING_SHAPED,
        ),
        Invalid("rows = (root / 'validation.jsonl').read_text()\n", "purpose", variant=ANSWERS),
        Invalid("df = pd.read_json(f'{data_dir}/dev.jsonl', lines=True)\n", "purpose", variant=ANSWERS),
        Invalid("rows = json.load(open('math_train.json'))\n", "purpose", variant=TRAINING_SHAPED),
        Invalid("rec = {'predicted_answer': p, 'is_correct': p == a}\n", "purpose", variant=ANSWERS),
        Invalid(
            "if __name__ == '__main__':\n    rows.append({'pred': p, 'gold': a, 'score': s})\n",
            "purpose",
            variant=ANSWERS,
        ),
        Invalid(
            "teacher = AutoModelForCausalLM.from_pretrained(path)\nouts = teacher.generate(ids)\n",
            "purpose",
            variant=TRAINING_DATA,
        ),
        Invalid("ds = load_dataset(name, split='train')\n", "purpose", variant=TRAINING_SHAPED),
        Invalid(
            "rows.append({'conversations': [{'from': 'human', 'value': q}]})\n",
            "purpose",
            variant=TRAINING_SHAPED,
        ),
        # preference pairs are data to train on, written out or not (an evaluation keeps no rejected answer)
        Invalid(
            "pairs.append({'prompt': p, 'chosen': a, 'rejected': b})\n", "purpose", variant=TRAINING_DATA
        ),
        Invalid("parser.add_argument('--teacher_model', type=str)\n", "purpose", variant=TRAINING_DATA),
        Invalid("generated.push_to_hub('me/traces')\n", "purpose", variant=TRAINING_DATA),
        Invalid("write_to_json(f'rm-eval-{name}-results.json', results)\n", "purpose", variant=ANSWERS),
        Invalid(
            "class DistillSampler(Sampler):\n    def run(self, rows):\n        return rows\n",
            "purpose",
            variant=TRAINING_DATA,
        ),
        Invalid(
            "with open(f'data/{name}/model_answer/{model}.jsonl', 'w') as f:\n    f.write(line)\n",
            "purpose",
            variant=ANSWERS,
        ),
        Invalid(
            "def main(input_data_path='/path/to/WizardLM_testset.jsonl'):\n    pass\n",
            "purpose",
            variant=ANSWERS,
        ),
        Invalid(
            "parser.add_argument('--output_file', default='train_data/train.json')\n",
            "purpose",
            variant=TRAINING_DATA,
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.seen: set[str] = set()
        """Names read already."""
        self.continued: set[int] = set()
        """Sums that are the left operand of a longer sum (their text goes on)."""
        self.cues: set[tuple[str, str]] = set()
        """Cues reported, as (variant, message)."""
        self.cued_statements: set[tuple[str, int]] = set()
        """The statements that gave a cue, with its variant: one statement says a thing once."""
        self.local_loads: set[str] = set()
        """Names bound to a dataset loaded from local files (see :meth:`_local_files`)."""
        self.paths: dict[str, list[cst.BaseExpression]] = {}
        """Path literals each name is assigned in the file (``fname = "./raw/mmcu/test.json"`` in one
        branch, another file in the other), at most :data:`MAX_PATHS` per name."""

    def _cue(self, node: cst.CSTNode, message: str, variant: str) -> None:
        """Report a cue once (by its message), once per statement, and at most :data:`MAX_CUES` in all.

        A cue repeated says no more than once (``d["test"]`` on every line of a padded file, a name and
        the file it is read from in one statement), and the bound keeps a hostile file's findings, and
        the time to place them, small.
        """
        statement = self.context.statements[-1] if self.context.statements else None
        if len(self.cues) >= MAX_CUES or (variant, message) in self.cues:
            return
        if statement is not None and (variant, id(statement)) in self.cued_statements:
            return  # (``bench = load(open("mt_bench.jsonl"))``: the name and its file say one thing)
        self.cues.add((variant, message))
        if statement is not None:
            self.cued_statements.add((variant, id(statement)))
        self.report(node, "purpose", message, variant=variant)

    def _named(self, node: cst.CSTNode, name: str, bound: bool = False) -> None:
        """Report a bound name that says what the outputs are for.

        ``bound``: the name is a variable assigned here; one never read (a leftover ``eval_path =
        "dev.jsonl"``) feeds nothing and says nothing (asked only of a name that would cue: the file's
        identifiers are counted once, then).
        """
        if name in self.seen:
            return
        self.seen.add(name)
        said = words(name)
        pairs = set(itertools.pairwise(said))
        if BENCHMARK_WORDS & set(said) or PREDICTION_WORDS & set(said) or pairs & ANSWER_NAMES:
            cue = (f"names the benchmark's questions or answers ({name})", ANSWERS)
        elif DATA_WORDS & set(said) or (
            DATASET_WORDS & set(said) and (said[0] in MAKING_VERBS or said[-1] in MAKERS)
        ):
            cue = (f"names data made to train on ({name})", TRAINING_DATA)
        else:
            return
        if not bound or self.context.mentions(name) != 1:
            self._cue(node, *cue)

    def _split(self, node: cst.CSTNode, value: cst.BaseExpression) -> None:
        """Report a split read by name: a held-out one is a benchmark's, a training one is for data."""
        if type(value) is not cst.SimpleString:
            return
        split = literal_text(value).lower()
        first = re.match(r"[a-z]*", split)
        word = first.group() if first is not None else ""
        if word in TRAIN_SPLITS and "[" not in split:  # (``train[:10]``, a slice, tries something out)
            self._cue(node, "answers prompts of a training split", TRAINING_SHAPED)
        elif word in HELD_OUT_SPLITS:
            self._cue(node, f"reads a held-out split ({word})", ANSWERS)

    def visit_Call(self, node: cst.Call) -> None:
        if delegates(node, self.enclosing, self.context.statements):
            return  # a wrapper's pass-through (``def push_to_hub(self, *a, **kw)``): its callers decide
        for arg in node.args:  # (one loop here costs less than a hook on every argument)
            if arg.keyword is not None and arg.keyword.value == "split":
                self._split(arg, arg.value)
        func = node.func
        called = func.attr.value if type(func) is cst.Attribute else None
        receiver = func.value if type(func) is cst.Attribute else None
        if called == "push_to_hub" and receiver is not None and not holds_model(receiver):
            self._cue(node, "publishes what it made as a dataset", TRAINING_DATA)
            return
        opened = type(func) is cst.Name and func.value == "open"
        if opened and node.args and not opens_for_writing(node):
            self._read(node, node.args[0].value)
        elif (
            receiver is not None
            and called in ("open", "read_text")
            and not opens_for_writing(node, mode_at=0)
        ):
            self._read(node, receiver)  # (root / "validation.jsonl").open()
        elif last_name(func) in READ_CALLS and node.args:
            self._read(node, node.args[0].value)
        if node.args and (
            (opened and opens_for_writing(node))
            or (called in DATASET_WRITERS and receiver is not None and not holds_model(receiver))
        ):
            self._path(node, node.args[0].value)
            return
        if type(func) is cst.Name and records_writer(func.value):
            # a project's JSON writer handed the path it writes (``write_to_json(f"rm-eval-{m}.json", r)``)
            for arg in node.args:
                if isinstance(arg.value, cst.SimpleString | cst.FormattedString):
                    self._path(node, arg.value)
            return
        if called != "add_argument" or not node.args:
            return
        option = node.args[0].value
        if type(option) is not cst.SimpleString:
            return
        name = literal_text(option)
        default = keyword(node, "default")
        if SPLIT_OPTION.fullmatch(name) and default is not None:
            self._split(node, default.value)
        elif name.startswith("-"):
            option_name = name.lstrip("-").replace("-", "_")
            self._named(node, option_name)
            said = set(words(option_name))
            if default is not None and FILE_SETTING_WORDS & said:
                # --output_file, default "train_data/train.json"
                written = bool(WRITTEN_SETTING_WORDS & said)
                self._path(node, default.value, written=written)
                if not written and said & READ_SETTING_WORDS:
                    self._read(node, default.value)  # --infile, default "artifacts/gsm8k/train.jsonl"

    def _path(self, node: cst.CSTNode, path: cst.BaseExpression, written: bool = True) -> None:
        """Report a file whose literal name says what it holds (``model_answer/``, ``sft_data``, ``testset``).

        A file written holds what the model made; one read (``written`` False), the questions it
        answers: only a benchmark's name says something of those.
        """
        text = " ".join(
            literal_text(n) if type(n) is cst.SimpleString else n.value
            for n in (path, *descendants(path))
            if isinstance(n, cst.SimpleString | cst.FormattedStringText)
        )
        said = set(re.findall(r"[a-z]+", text.lower()))
        base = set(re.findall(r"[a-z]+", text.lower().replace("\\", "/").rsplit("/", 1)[-1]))
        if base & TRACE_WORDS and not said & PROFILING_WORDS:
            said.add("generated")  # (``r1_gsm8k_traces.jsonl``: a teacher's reasoning written out)
        if said & DATA_PATH_WORDS == {"generated"} and base & MODEL_OUTPUT_WORDS and not base & TRACE_WORDS:
            # ``generated_outputs.json``: what a model generated, for whatever comes next (the file's
            # own name says so, not its folder's: ``outputs/r1_traces.jsonl`` holds traces)
            said.discard("generated")
        if said & ANSWER_PATH_WORDS and not said & DATA_PATH_WORDS:
            self._cue(node, f"names a file for answers ({text})", ANSWERS)
        elif written and said & DATA_PATH_WORDS and not said & ANSWER_PATH_WORDS:
            self._cue(node, f"names a file for training data ({text})", TRAINING_DATA)

    def _read(self, node: cst.CSTNode, path: cst.BaseExpression) -> None:
        """Report a file read whose literal name is a split's (``f"data/{name}/test.json"``, ``train.jsonl``).

        The split is the name's last word (``gsm8k_test.jsonl``), not a word qualifying another
        (``test_cases.json``, ``train_val_split.json``); a folder's name says nothing (``test/``). A
        name is read through the path literals it is set to, where those that say a split agree (a
        name set to a test file, then to a training file, says neither: the code's flow is not read).
        """
        bound = self.paths.get(path.value, []) if type(path) is cst.Name else [path]
        cues = {cue for literal in bound if (cue := _split_file(literal)) is not None}
        if len({variant for _, variant in cues}) == 1:
            for message, variant in sorted(cues):
                self._cue(node, message, variant)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        # dataset["test"]: a split of a DatasetDict taken by its key (only the keys that name nothing
        # but a split: a dict's "eval" or "val" entry is as often a metric's)
        if len(node.slice) == 1 and isinstance(index := node.slice[0].slice, cst.Index):
            value = index.value
            if type(value) is cst.SimpleString and (key := literal_text(value)) in SPLIT_KEYS:
                if key in TRAIN_SPLITS:
                    if self._local_files(node.value):
                        return  # (the one split a load of local files makes: it names no purpose)
                    self._cue(node, "reads a training split by its key", TRAINING_SHAPED)
                else:
                    self._cue(node, "reads a held-out split by its key", ANSWERS)

    def _local_files(self, loaded: cst.BaseExpression) -> bool:
        """Say whether a dataset is a load of local files (``load_dataset("json", data_files=path)``).

        datasets puts such files in one split called "train" whatever they hold (a benchmark's test
        items too), so taking that split says nothing of what the data is for. Also a name bound
        to such a load (``ds = load_dataset("parquet", data_files=f)``, then ``ds["train"]``).
        """
        if type(loaded) is cst.Name:
            return loaded.value in self.local_loads
        files = keyword(loaded, "data_files") if type(loaded) is cst.Call else None
        return (
            type(loaded) is cst.Call
            and last_name(loaded.func) == "load_dataset"
            # (files given by split, ``data_files={"train": ..., "test": ...}``, make those splits)
            and not (files is not None and type(files.value) is cst.Dict)
            and (
                files is not None
                or (
                    bool(loaded.args)
                    and loaded.args[0].keyword is None
                    and type(loaded.args[0].value) is cst.SimpleString
                    and literal_text(loaded.args[0].value) in FILE_BUILDERS
                )
            )
        )

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        targets = [t.target.value for t in node.targets if type(t.target) is cst.Name]
        if type(value) is cst.Call and self._local_files(value):
            self.local_loads.update(targets)
        else:
            self.local_loads.difference_update(targets)  # (a name bound again holds something else)
        if isinstance(value, cst.SimpleString | cst.FormattedString) or _joined_path(value):
            for target in targets:
                bound = self.paths.setdefault(target, [])
                if len(bound) < MAX_PATHS:
                    bound.append(value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        target = node.target
        if type(target) is cst.Name:
            self._named(node, target.value, bound=True)
        elif type(target) is cst.Attribute and not any("." in q for q in self.names(target.value)):
            # (a library's setting, ``torch.backends.cudnn.benchmark = False``, names no output)
            self._named(node, target.attr.value)

    def visit_Param(self, node: cst.Param) -> None:
        self._named(node, node.name.value)
        said = set(words(node.name.value))
        if node.default is not None and FILE_SETTING_WORDS & said:
            # input_data_path = "data/WizardLM_testset.jsonl"
            self._path(node, node.default, written=bool(WRITTEN_SETTING_WORDS & said))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._named(node, node.name.value)  # class DistillSampler: what its code makes

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._named(node, node.name.value)

    def visit_Dict(self, node: cst.Dict) -> None:
        keys = {
            literal_text(e.key)
            for e in node.elements
            if type(e) is cst.DictElement and type(e.key) is cst.SimpleString
        }
        if {"chosen", "rejected"} <= keys:
            # (a chosen answer set against a rejected one is preference data: nothing else is kept so)
            self._cue(node, "builds preference pairs (chosen and rejected)", TRAINING_DATA)
        elif "conversations" in keys:
            self._cue(node, "builds training records (conversations)", TRAINING_SHAPED)
        predicted = {k for k in keys if PREDICTION_KEY_WORDS & set(words(k))}
        truth = {k for k in keys - predicted if TRUTH_KEY_WORDS & set(words(k))}
        if predicted and truth and not self._kept_if_right():
            # {"pred": p, "gold": a, "score": s}: a model's answer kept beside the one it is checked
            # against is an evaluation's record; data to train on keeps the answer alone, or only
            # the answers that were right (STaR's rationales, rejection sampling)
            self._cue(node, "records predictions beside the reference answers", ANSWERS)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, cst.Add):
            return
        continued = id(node) in self.continued
        self.continued.add(id(node.left))  # (``a + eos + b``: the inner sum goes on, its text does not end)
        if not continued and _ends_sequence(node.right) and _holds_text(node.left) and self._builds_example():
            self._cue(node, "ends a text with the tokenizer's end-of-sequence token", TRAINING_SHAPED)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        parts = node.parts
        if (
            parts
            and type(parts[-1]) is cst.FormattedStringExpression
            and _ends_sequence(parts[-1].expression)
            and any(
                type(p) is cst.FormattedStringExpression and _holds_text(p.expression) for p in parts[:-1]
            )
            and self._builds_example()
        ):
            self._cue(node, "ends a text with the tokenizer's end-of-sequence token", TRAINING_SHAPED)

    def _builds_example(self) -> bool:
        """Say whether the statement being read builds a text to keep, not a prompt or a log line.

        ``prefix = "".join(shot + tok.eos_token for shot in shots)``: few-shot demonstrations joined
        into a prompt; ``log.info(f"eos={tok.eos_token}")``: a line shown.
        """
        small = self.context.statements[-1] if self.context.statements else None
        if type(small) is cst.Assign:
            return not any(PROMPT_WORDS & set(words(last_name(t.target))) for t in small.targets)
        if type(small) is cst.Expr and type(small.value) is cst.Call:
            return last_name(small.value.func) not in SHOWN_BY
        return True

    def _kept_if_right(self) -> bool:
        """Say whether the statement being read runs only when an answer checks out.

        ``if pred == gold:``, ``if extract(out) == row["answer"]:``, ``if is_correct:``; a test of
        anything else (``if __name__ == "__main__":``, ``if args.split == "test":``) keeps nothing.
        """
        for statement in self.context.statements:
            if type(statement) is not cst.If:
                continue
            inside = (statement.test, *descendants(statement.test))
            said = {
                w
                for n in inside
                if isinstance(n, cst.Name | cst.SimpleString)
                for w in words(n.value if isinstance(n, cst.Name) else literal_text(n))
            }
            compared = any(
                type(n) is cst.Comparison and any(isinstance(c.operator, cst.Equal) for c in n.comparisons)
                for n in inside
            )
            if said & CHECK_WORDS or (compared and said & ANSWER_KEY_WORDS):
                return True
        return False
