"""Writing generated examples out as a dataset."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import data_generator, delegates, method
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid, keyword
from arb_audit.analyzer.detectors.metric_report import METRIC_WORDS
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name, literal_text
from arb_audit.analyzer.walk import descendants

DATASET_WRITERS = frozenset(
    {"push_to_hub", "to_json", "to_parquet", "save_to_disk", "to_csv", "write_json", "write_parquet"}
)
"""Methods that write a dataset (Hugging Face datasets, pandas, Ray Data)."""
RECORD_WORDS = frozenset(
    {
        *("data", "dataset", "ds", "records", "samples", "examples", "outputs", "responses", "generations"),
        *("completions", "conversations", "instructions", "pairs", "rows", "trajectories"),
        *("objs", "entries", "items", "instances", "questions", "prompts", "problems", "dialogues", "tasks"),
    }
)
"""Words of a collection of generated examples (not of results or metrics) dumped in one go."""
JSON_ENCODERS = frozenset({"json.dumps", "orjson.dumps", "ujson.dumps"})
"""Encoders whose output, written line by line, is a JSON-lines dataset."""
RESULT_WORDS = frozenset({"score", "scores", "result", "results", "stats", "statistics", "eval", "evals"})
"""Words of a collection of an evaluation's results (beside a metric's own words), not of records."""
JSON_WRITERS = frozenset({"json.dump", "ujson.dump"})
"""Writers of one JSON document to a file: inside a loop, one record per iteration (JSON lines)."""
PICKLE_WRITERS = frozenset({"pickle.dump"})
"""Writers of one pickled object to a file: the collection a loop grows, saved again as it grows."""


RECORD_FILE_OPENERS = frozenset({"jsonlines.open"})
"""Functions that open a file of records, for writing with a ``w`` or ``a`` mode."""
RECORD_FILE_WRITERS = frozenset({"jsonlines.Writer"})
"""Classes that write records to a file one JSON line each (``jsonlines.Writer(f)``)."""
DATASET_WORDS = frozenset({"dataset", "datasets", "samples", "records", "examples", "conversations"})
"""Words of a helper that writes a dataset of records (``save_dataset``, ``write_samples``)."""
WRITE_VERBS = frozenset({"dump", "write", "save", "append", "export"})
"""Verbs of a helper that writes what it is given to a file."""
JSON_WORDS = frozenset({"json", "jsonl", "jsonlines"})
"""Words of a helper's name that say it writes JSON (``write_jsonl``, ``save_json``)."""
DATASET_FORMATS = frozenset(
    {"parquet", "arrow", "jsonl", "jsonlines", "json", "dataset", "record", "records"}
)
"""Words of a writer class that writes a dataset file (not a log or a TensorBoard summary)."""


ANSWER_FIELDS = frozenset({"choices", "generated_text"})
"""Fields of a model's reply holding its text (an OpenAI-style ``response["choices"]``, a
``transformers`` pipeline's ``generated_text``); vLLM's is ``outputs[i].text``."""


def _answer_text(value: cst.BaseExpression) -> bool:
    """Say whether ``value`` reads the text of a model's reply (``r["choices"][0]["message"]["content"]``)."""
    fields: set[str] = set()
    for n in (value, *descendants(value)):
        if type(n) is cst.Attribute:
            fields.add(n.attr.value)
        elif (
            type(n) is cst.SubscriptElement
            and type(n.slice) is cst.Index
            and isinstance(key := n.slice.value, cst.SimpleString)
        ):
            fields.add(literal_text(key))
    return bool(fields & ANSWER_FIELDS) or {"outputs", "text"} <= fields


class DataOutput(RouteDetector):
    """Saving or pushing a dataset, or writing JSON lines, is how generated data leaves a script.

    Together with generation and no training, it makes a file data generation (``DISTILLATION``).
    ``model.push_to_hub`` is a model, not a dataset: only calls on something that is not a model or
    tokenizer count.
    """

    TRIGGERS = (
        "push_to_hub",
        "to_json",
        "to_parquet",
        "save_to_disk",
        "to_csv",
        "dump",
        "_json",
        *(f"{verb}_{thing}" for verb in WRITE_VERBS for thing in sorted(DATASET_WORDS)),
        "distilabel",
        "synthetic_data_kit",
        "llama_index",
        "curator",
        "datadreamer",
        "Writer(",
        "jsonlines",
        "choices",
        "generated_text",
        ".outputs",
    )

    VALID = (
        # an evaluation's results written as one document: no records
        Valid("import json\nOUT.write_text(json.dumps(results, indent=2))\n"),
        Valid("import json\ndoc = json.dumps(results)\nOUT.write_text(doc)\nOUT.write_text(text)\n"),
        # the name bound to something else before the write, or bound in another function
        Valid(
            "import json\ndef run(records):\n    doc = json.dumps(records)\n    doc = summary(records)\n"
            "    OUT.write_text(doc)\ndef other(records):\n    doc = json.dumps(records)\n"
            "def report(stats):\n    OUT.write_text(doc)\n"
        ),
        Valid("import json\nfor step, m in enumerate(ms):\n    log.write(f'{step}: {json.dumps(m)}\\n')\n"),
        Valid(
            "class WithValueHead(nn.Module):\n    def push_to_hub(self, *args, **kwargs):\n"
            "        return self.pretrained_model.push_to_hub(*args, **kwargs)\n"
        ),
        Valid("save_results(results, 'out/scores.json')\n"),
        Valid("model.push_to_hub('me/model')\ntokenizer.push_to_hub('me/model')\n"),
        Valid("config = load_json(path)\n"),
        Valid("import json\nwith open('results.json', 'w') as f:\n    json.dump(results, f)\n"),
        Valid("import pickle\nwith open('scores.pkl', 'wb') as f:\n    pickle.dump(scores, f)\n"),
        Valid(
            "import pickle\nfor epoch in range(3):\n    scores.append(run(epoch))\n"
            "    pickle.dump(model, open(p, 'wb'))\n"
        ),
        Valid("import json, sys\nprint(json.dumps(stats), file=sys.stderr)\n"),
        Valid("import json\nwith open('metrics.json', 'w') as f:\n    json.dump(eval_metrics, f)\n"),
        Valid("with open(p, 'w') as f:\n    for line in lines:\n        f.write(line.text)\n"),
        Valid("f = open(p)\nfor o in outs:\n    f.write(o['choices'][0])\n"),
        Valid("r = client.chat(m)\nwith open(p, 'w') as f:\n    f.write(r.choices[0].message.content)\n"),
        Valid(
            "import sys\nfor chunk in stream:\n    sys.stdout.write(chunk.choices[0].delta.content or '')\n"
        ),
        Valid(
            "for i, r in enumerate(rs):\n    files[i].write(r.choices[0].text)\n"
            "    self.f.write(r.choices[0].text)\n"
        ),
    )
    INVALID = (
        Invalid("import json\nOUT.write_text(json.dumps(records, indent=2))\n", "data_output"),
        Invalid("import orjson\nOUT.write_bytes(orjson.dumps(records) + b'\\n')\n", "data_output"),
        Invalid("import json\ndoc = json.dumps(records, indent=2)\nOUT.write_text(doc)\n", "data_output"),
        Invalid("dataset.push_to_hub('me/traces')\n", "data_output"),
        Invalid(
            "import json\nwith open(p, 'w') as fd:\n    for item in items:\n"
            "        fd.write(f'{json.dumps(item, ensure_ascii=False)}\\n')\n",
            "data_output",
        ),
        Invalid("ds.to_json('out.jsonl', lines=True)\n", "data_output"),
        Invalid("append_jsonl(rows, 'data/v2.jsonl')\n", "data_output"),
        Invalid(
            "import jsonlines\nwith jsonlines.open(out, mode='w') as writer:\n    writer.write_all(rows)\n",
            "data_output",
        ),
        Invalid("from utils import save_dataset\nsave_dataset(dataset, SAVED_FILE)\n", "data_output"),
        Invalid(
            "import utils\nutils.jdump(machine_instruction_data, os.path.join(out, 'regen.json'))\n",
            "data_output",
        ),
        Invalid("write_jsonl(rows, 'train.jsonl')\n", "data_output"),
        Invalid(
            "import jsonlines\nwith open(path, 'w') as f:\n    writer = jsonlines.Writer(f)\n"
            "    for item in items:\n        writer.write(item)\n",
            "data_output",
        ),
        Invalid(
            "import json\nwith open('out.json', 'w') as f:\n    json.dump(new_records, f, indent=4)\n",
            "data_output",
        ),
        Invalid(
            "import json\nwith open('evolved.json', 'w') as f:\n    json.dump(evol_objs, f, indent=4)\n",
            "data_output",
        ),
        Invalid(
            "import json\nwith open(out, 'a') as f:\n    print(json.dumps(m, ensure_ascii=False), file=f)\n",
            "data_output",
        ),
        Invalid(
            "import pickle as pkl\nfor q in questions:\n    chats.append(ask(q))\n"
            "    pkl.dump(chats, open('collected/chat.pkl', 'wb'))\n",
            "data_output",
        ),
        Invalid(
            "import pickle\nwith open('pairs.pkl', 'wb') as f:\n    pickle.dump(pairs, f)\n", "data_output"
        ),
        Invalid(
            "import json\nwith open(self.out, 'w') as f:\n    json.dump(self.machine_tasks, f, indent=4)\n",
            "data_output",
        ),
        Invalid("ds.write_json('s3://bucket/generated')\n", "data_output"),
        Invalid(
            "import pyarrow.parquet as pq\nwriter = pq.ParquetWriter(path, schema)\n"
            "writer.write_table(table)\n",
            "data_output",
        ),
        Invalid(
            "with StreamingParquetWriter(out, batch_size=64) as writer:\n    writer.write(row)\n",
            "data_output",
        ),
        Invalid(
            "import json\nwith open('o.jsonl', 'a') as f:\n    f.write(json.dumps(row) + '\\n')\n",
            "data_output",
        ),
        Invalid(
            "import json\ndef to_jsonl(rows):\n    return '\\n'.join(json.dumps(r) for r in rows)\n",
            "data_output",
        ),
        Invalid(
            "import json\nfor d in rows:\n    with open(path, 'a') as f:\n        json.dump(d, f)\n"
            "        f.write('\\n')\n",
            "data_output",
        ),
        Invalid(
            "import openai\nout = open(sys.argv[1], 'w')\nfor k in range(n):\n"
            "    r = openai.ChatCompletion.create(model='m', messages=m)\n"
            "    out.write(r['choices'][0]['message']['content'] + '\\n')\n",
            "data_output",
        ),
        Invalid(
            "with open(p, 'a') as f:\n    for o in llm.generate(prompts):\n"
            "        f.write(o.outputs[0].text)\n",
            "data_output",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.loops = 0
        self.writers: set[str] = set()
        """Names bound to a dataset file writer (``writer = pq.ParquetWriter(path, schema)``), or
        parameters annotated as one."""
        self.writes: list[tuple[cst.Call, cst.CSTNode | None]] = []
        """``name.write*(...)`` calls, with their statements."""
        self.pickled: list[tuple[cst.Call, cst.CSTNode | None]] = []
        """``pickle.dump(obj, f)`` calls, with their statements."""
        self.grown: set[str] = set()
        """Names of collections grown inside a loop (``chats.append(answer)``, ``chats[q] = answer``)."""
        self.text_files: set[str] = set()
        """Names bound to a plain file opened for writing (``f = open(path, "w")``)."""
        self.documents: set[tuple[tuple[str, ...], str]] = set()
        """Names bound to records encoded as one JSON document (``doc = json.dumps(records)``), with the
        functions they are bound in."""
        self.answers: list[tuple[cst.Call, cst.CSTNode | None]] = []
        """``name.write(...)`` calls in a loop writing the text of a model's reply, with their statements."""

    def visit_Param(self, node: cst.Param) -> None:
        annotation = node.annotation.annotation if node.annotation is not None else None
        if annotation is not None and (
            _file_writer(annotation) or self.names(annotation) & RECORD_FILE_WRITERS
        ):
            self.writers.add(node.name.value)

    def leave_Module(self, original_node: cst.Module) -> None:
        for call, statement in self.pickled:
            # a collection a loop grows, or one named as generated records, pickled: a dataset (a
            # model's weights or an evaluation's scores pickled are none)
            dumped = call.args[0].value
            if set(words(last_name(dumped))) & (METRIC_WORDS | RESULT_WORDS):
                continue  # (``scores``, ``results``: an evaluation's, pickled as it goes)
            if (type(dumped) is cst.Name and dumped.value in self.grown) or _records(dumped):
                self.report(
                    call, "data_output", "writes the records it collected as a pickle", statement=statement
                )
                break
        for call, statement in self.writes:
            assert type(call.func) is cst.Attribute and type(call.func.value) is cst.Name
            if call.func.value.value in self.writers:
                message = f"writes records with a dataset file writer ({call.func.attr.value})"
                self.report(call, "data_output", message, statement=statement)
                return
        for call, statement in self.answers:
            assert type(call.func) is cst.Attribute and type(call.func.value) is cst.Name
            if call.func.value.value in self.text_files:
                # one reply after another into a file: what the model said is kept as text
                message = "writes the text of a model's replies to a file, one per iteration"
                self.report(call, "data_output", message, statement=statement)
                return

    def _opens_text_file(self, call: cst.BaseExpression, target: cst.BaseExpression | None) -> None:
        if (
            type(call) is cst.Call
            and type(target) is cst.Name
            and self.names(call.func) & {"open", "builtins.open", "io.open"}
            and opens_for_writing(call)
        ):
            self.text_files.add(target.value)

    def _opens_writer(self, call: cst.BaseExpression) -> bool:
        """Say whether a call makes a dataset file writer (``JsonlWriter(p)``, ``jsonlines.open(p, "w")``)."""
        if type(call) is not cst.Call:
            return False
        if _file_writer(call.func) or self.names(call.func) & RECORD_FILE_WRITERS:
            return True
        if last_name(call.func) != "open" or not self.names(call.func) & RECORD_FILE_OPENERS:
            return False
        return opens_for_writing(call)

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._opens_writer(node.value):
            self.writers |= {t.target.value for t in node.targets if type(t.target) is cst.Name}
        # (a name bound to anything else after holds that instead; one function's name is not another's)
        where = tuple(self.enclosing())
        document = type(node.value) is not cst.Name and self._records_document(node.value)
        for t in node.targets:
            if type(t.target) is cst.Name:
                (self.documents.add if document else self.documents.discard)((where, t.target.value))
        for t in node.targets:
            self._opens_text_file(node.value, t.target)
            if self.loops and type(t.target) is cst.Subscript and type(t.target.value) is cst.Name:
                self.grown.add(t.target.value.value)  # ``chats[query] = response``: an entry per pass

    def visit_WithItem(self, node: cst.WithItem) -> None:
        target = node.asname.name if node.asname is not None else None
        if self._opens_writer(node.item) and type(target) is cst.Name:
            self.writers.add(target.value)
        self._opens_text_file(node.item, target)

    def visit_For(self, node: cst.For) -> None:
        self.loops += 1

    def leave_For(self, original_node: cst.For) -> None:
        self.loops -= 1

    def visit_While(self, node: cst.While) -> None:
        self.loops += 1

    def leave_While(self, original_node: cst.While) -> None:
        self.loops -= 1

    def visit_Call(self, node: cst.Call) -> None:
        if delegates(node, self.enclosing, self.context.statements):
            return  # a wrapper's pass-through (``def push_to_hub(self, *a, **kw)``): its callers decide
        if self.loops and len(node.args) >= 2 and self.names(node.func) & JSON_WRITERS:
            self.report(node, "data_output", "writes one JSON record per iteration")
            return
        if len(node.args) >= 2 and self.names(node.func) & JSON_WRITERS and _records(node.args[0].value):
            self.report(node, "data_output", "writes the generated records as one JSON document")
            return
        if (
            method(node) in ("write_text", "write_bytes")
            and node.args
            and self._records_document(node.args[0].value)
        ):
            # out_path.write_text(json.dumps(records)): one JSON document of records, as json.dump's
            self.report(node, "data_output", "writes the generated records as one JSON document")
            return
        if len(node.args) >= 2 and self.names(node.func) & PICKLE_WRITERS:
            # judged after the walk: the collection is grown (``chats.append(...)``) before or after
            self.pickled.append((node, self.context.statements[-1] if self.context.statements else None))
            return
        if (
            type(node.func) is cst.Attribute
            and node.func.attr.value in ("append", "extend")
            and type(node.func.value) is cst.Name
            and self.loops
        ):
            self.grown.add(node.func.value.value)
        if self._json_helper(node):
            self.report(node, "data_output", "writes records with a JSON helper")
            return
        if data_generator(self.names(node.func), self.context.resolver.ancestry) is not None:
            self.report(node, "data_output", "builds a synthetic dataset")
            return
        name = method(node)
        receiver = node.func.value if type(node.func) is cst.Attribute else None
        if name is not None and name.startswith("write") and type(receiver) is cst.Name:
            # judged after the walk: the writer may be bound below its use (a helper written first)
            self.writes.append((node, self.context.statements[-1] if self.context.statements else None))
        if name == "write" and node.args and self._encodes_json(node.args[0].value):
            self.report(node, "data_output", "writes JSON lines")
            return
        if (
            type(node.func) is cst.Name
            and node.func.value == "print"
            and (file := keyword(node, "file")) is not None
            and type(file.value) is cst.Name  # (``file=sys.stderr`` logs; a file of ours is a name)
            and (printed := next((a.value for a in node.args if a.keyword is None and not a.star), None))
            is not None
            and self._encodes_json(printed)
        ):
            # print(json.dumps(record), file=f): a JSON line written by print
            self.report(node, "data_output", "writes JSON lines")
            return
        if (
            name == "write"
            and type(receiver) is cst.Name  # (``sys.stdout.write``, ``files[i].write``: no file of ours)
            and self.loops
            and node.args
            and _answer_text(node.args[0].value)
        ):
            self.answers.append((node, self.context.statements[-1] if self.context.statements else None))
        if name == "join" and self._json_lines(node):
            self.report(node, "data_output", "encodes records as JSON lines")
            return
        if name in DATASET_WRITERS:
            assert type(node.func) is cst.Attribute
            if not holds_model(node.func.value):
                self.report(node, "data_output", f"writes a dataset with {name}()")

    def _records_document(self, value: cst.BaseExpression) -> bool:
        """Say whether ``value`` is records encoded as one JSON document (``json.dumps(records)``).

        Possibly with a newline added, or by the name it was bound to first (``doc = json.dumps(rows)``).
        """
        encoded = _first_operand(value)
        if type(encoded) is cst.Name:
            return (tuple(self.enclosing()), encoded.value) in self.documents
        return (
            type(encoded) is cst.Call
            and bool(encoded.args)
            and bool(self.names(encoded.func) & JSON_ENCODERS)
            and _records(encoded.args[0].value)
        )

    def _json_helper(self, node: cst.Call) -> bool:
        """Say whether ``node`` calls a project's writer of records with data and a path.

        ``jdump(rows, p)``, ``save_jsonl(rows, p)``, ``save_dataset(dataset, p)``: named for JSON or
        for a dataset of records (``save_results`` is as often an evaluation's scores: not counted).
        """
        return len(node.args) >= 2 and records_writer(last_name(node.func))

    def _json_lines(self, node: cst.Call) -> bool:
        """Say whether ``node`` joins JSON-encoded records with newlines: a JSON-lines document."""
        assert type(node.func) is cst.Attribute
        separator = node.func.value
        if not (type(separator) is cst.SimpleString and separator.evaluated_value == "\n"):
            return False
        if len(node.args) != 1 or not isinstance(node.args[0].value, cst.GeneratorExp | cst.ListComp):
            return False
        return self._encodes_json(node.args[0].value.elt)

    def _encodes_json(self, value: cst.BaseExpression) -> bool:
        r"""Say whether ``value`` is ``json.dumps(...)``, possibly with a newline added.

        Added by ``+`` or by an f-string holding only the record (``f"{json.dumps(item)}\n"``).
        """
        if type(value) is cst.BinaryOperation:
            return self._encodes_json(value.left)
        if type(value) is cst.FormattedString:
            held = [p for p in value.parts if type(p) is cst.FormattedStringExpression]
            return len(held) == 1 and self._encodes_json(held[0].expression)
        return type(value) is cst.Call and bool(self.names(value.func) & JSON_ENCODERS)


def records_writer(name: str) -> bool:
    """Say whether a function's name is a project's writer of records (``save_jsonl``, ``jdump``).

    Named for writing, and for JSON or a dataset of records (``save_results`` is as often an
    evaluation's scores: not counted).
    """
    said = set(words(name))
    writes = said & WRITE_VERBS or name.endswith("dump")
    return bool(writes) and (bool(said & (JSON_WORDS | DATASET_WORDS)) or name in ("jdump", "jldump"))


MODEL_HOLDERS = ("model", "tokenizer", "trainer", "processor")
"""Parts of a name that holds a model or its companions, whose ``push_to_hub`` publishes weights."""


def opens_for_writing(call: cst.Call, mode_at: int = 1) -> bool:
    """Say whether an ``open(path, mode)``-like call's mode writes (``w``, ``a``, ``x``).

    ``mode_at``: where the mode comes positionally (0 for a path's own ``path.open("w")``).
    """
    mode = keyword(call, "mode") or (call.args[mode_at] if len(call.args) > mode_at else None)
    return (
        mode is not None
        and type(mode.value) is cst.SimpleString
        and literal_text(mode.value)[:1] in ("w", "a", "x")
    )


def holds_model(receiver: cst.BaseExpression) -> bool:
    """Say whether a writer's receiver is a model or its companion (``model.push_to_hub``), not data."""
    text = receiver.value.lower() if type(receiver) is cst.Name else ""
    return any(word in text for word in MODEL_HOLDERS)


def _file_writer(func: cst.BaseExpression) -> bool:
    """Say whether a callee is a writer of a dataset file (``ParquetWriter``, ``JsonlWriter``)."""
    found = set(words(last_name(func)))
    return "writer" in found and bool(found & DATASET_FORMATS)


def _first_operand(value: cst.BaseExpression) -> cst.BaseExpression:
    """Return what a concatenation starts with (``json.dumps(rows) + newline``), else the value itself."""
    while type(value) is cst.BinaryOperation and isinstance(value.operator, cst.Add):
        value = value.left
    return value


def _records(value: cst.BaseExpression) -> bool:
    """Say whether a dumped value is named as generated examples (``records``), not results."""
    return bool(RECORD_WORDS & set(words(last_name(value))))
