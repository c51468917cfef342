"""Untrusted files become source text and a libcst Module, or a clear message; nothing raises or crashes."""

from __future__ import annotations

import codecs
import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import libcst
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from libcst.metadata import MetadataWrapper, PositionProvider

from arb_audit.analyzer import source
from arb_audit.analyzer.batch import classify_path
from arb_audit.analyzer.source import (
    MAX_CHAIN,
    MAX_NESTING,
    MAX_SOURCE_BYTES,
    SKIPPED_LINE,
    parse_python,
    percent_script,
    read_source,
    source_from_bytes,
)

NEWLINE = re.compile(r"\r\n|\r|\n")


def write(tmp_path: Path, name: str, raw: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(raw)
    return path


def line_of_def(module: libcst.Module, name: str) -> int:
    """The line the top-level ``def name`` starts on, as libcst's position metadata reports it."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    for statement in wrapper.module.body:
        if isinstance(statement, libcst.FunctionDef) and statement.name.value == name:
            return positions[statement].start.line
    raise AssertionError(f"no def {name}")


def assert_lines_kept(original: str, parsed: str) -> None:
    """Every line of the partial module is the file's line at the same number, or a skipped one."""
    want, got = NEWLINE.split(original), NEWLINE.split(parsed)
    # Only the final newline may differ: a dropped last line gains one, and libcst drops a lone
    # trailing "\r" in a file whose other lines end in "\n".
    assert abs(len(got) - len(want)) <= 1
    for number, (a, b) in enumerate(zip(want, got, strict=False), 1):
        assert b in (a, "", SKIPPED_LINE), f"line {number}: {a!r} became {b!r}"


# ------------------------------------------------------------------------------------------ decoding


def test_utf8_bom_is_honoured_and_dropped(tmp_path: Path) -> None:
    got = read_source(write(tmp_path, "a.py", b"\xef\xbb\xbfname = '\xc3\xa9t\xc3\xa9'\n"))
    assert (got.kind, got.text, got.error) == ("python", "name = 'été'\n", None)


def test_latin1_coding_cookie_is_honoured(tmp_path: Path) -> None:
    raw = b"# -*- coding: latin-1 -*-\nname = '\xe9t\xe9'\n"
    got = read_source(write(tmp_path, "legacy.py", raw))
    assert got.error is None and got.text is not None and "name = 'été'" in got.text


def test_invalid_utf8_names_the_byte_and_its_offset() -> None:
    raw = b"x = 1\ny = '\xff'\n"
    got = source_from_bytes(raw, "bad.py")
    assert got.text is None
    assert got.error == f"not UTF-8 text (invalid byte 0xff at offset {raw.index(0xFF)})"


def test_invalid_byte_offset_counts_the_bom() -> None:
    raw = b"\xef\xbb\xbfx = 1\n\xfe\n"
    assert source_from_bytes(raw, "bad.py").error == "not UTF-8 text (invalid byte 0xfe at offset 9)"


def test_cookie_encoding_is_named_when_the_bytes_break_it() -> None:
    got = source_from_bytes(b"# coding: ascii\nx = '\xe9'\n", "a.py")
    assert got.error is not None and "ascii" in got.error and "0xe9 at offset 21" in got.error


@pytest.mark.parametrize(
    ("cookie", "said"),
    [(b"latin-99", "bad coding cookie"), (b"base64", "not a text encoding"), (b"punycode", "not read")],
)
def test_odd_coding_cookies_are_refused(cookie: bytes, said: str) -> None:
    got = source_from_bytes(b"# coding: " + cookie + b"\nx = 1\n", "a.py")
    assert got.text is None and got.error is not None and said in got.error


def test_nul_bytes_mean_binary() -> None:
    got = source_from_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00", "train.py")
    assert (got.text, got.error) == (None, "binary file (NUL bytes), not source")


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("a.py", "python"),
        ("a.PYW", "python"),
        ("nb.ipynb", "notebook"),
        ("c.yaml", "yaml"),
        ("c.yml", "yaml"),
        ("run.sh", "shell"),
        ("run.bash", "shell"),
        ("README", "other"),
        ("notes.txt", "other"),
    ],
)
def test_kind_is_decided_by_suffix(name: str, kind: str) -> None:
    raw = b'{"cells": []}' if kind == "notebook" else b"x: 1\n"
    got = source_from_bytes(raw, name)
    assert (got.kind, got.error, got.path) == (kind, None, name)
    assert got.text is not None


def test_marimo_notebook_is_python_with_its_own_kind() -> None:
    raw = b"import marimo\n\napp = marimo.App()\n\n@app.cell\ndef _():\n    return\n"
    got = source_from_bytes(raw, "nb.py")
    assert got.kind == "marimo" and got.text is not None
    assert parse_python(got.text).error is None


def test_yaml_and_shell_keep_their_raw_text() -> None:
    raw = b"\xef\xbb\xbfpython train.py --lr 1e-5 # \xc3\xa9\n"
    assert source_from_bytes(raw, "run.sh").text == "python train.py --lr 1e-5 # é\n"
    assert (
        source_from_bytes(b"\xffa: 1\n", "c.yaml").error == "not UTF-8 text (invalid byte 0xff at offset 0)"
    )


# ---------------------------------------------------------------------------------- the file system


def test_oversized_file_is_refused_by_its_size_without_reading_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "huge.py"
    path.touch()
    os.truncate(path, 3 * 1024 * 1024)  # sparse: nothing is written

    def no_open(*args: Any, **kwargs: Any) -> int:
        raise AssertionError("an oversized file was opened")

    monkeypatch.setattr(os, "open", no_open)
    got = read_source(path)
    assert got.text is None
    assert got.error == f"too large: 3,145,728 bytes (the limit is {MAX_SOURCE_BYTES:,})"


def test_oversized_blob_is_refused_by_its_size() -> None:
    got = source_from_bytes(b"#" * (MAX_SOURCE_BYTES + 1), "big.py")
    assert got.error is not None and f"{MAX_SOURCE_BYTES + 1:,} bytes" in got.error


def test_symlink_is_not_followed(tmp_path: Path) -> None:
    target = write(tmp_path, "real.py", b"x = 1\n")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    got = read_source(link, "code/link.py")
    assert (got.path, got.kind, got.text, got.error) == (
        "code/link.py",
        "python",
        None,
        "symlink, not followed",
    )


def test_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "pkg.py").mkdir()
    assert read_source(tmp_path / "pkg.py").error == "a directory, not a file"


def test_missing_file_gives_the_os_reason(tmp_path: Path) -> None:
    got = read_source(tmp_path / "gone.py")
    assert got.text is None and got.error == "cannot read: No such file or directory"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    assert read_source(tmp_path / "pipe.py").error == "not a regular file (a device, socket or pipe)"


def test_unreadable_file_gives_the_os_reason(tmp_path: Path) -> None:
    path = write(tmp_path, "secret.py", b"x = 1\n")
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("running as a user that reads everything")
        assert read_source(path).error == "cannot read: Permission denied"
    finally:
        path.chmod(0o600)


# ----------------------------------------------------------------------------------------- notebooks


def notebook(cells: list[dict[str, Any]]) -> bytes:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}).encode()


def code(source: str | list[str]) -> dict[str, Any]:
    return {"cell_type": "code", "source": source, "metadata": {}, "outputs": [], "execution_count": None}


def markdown(text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "source": text, "metadata": {}}


def test_notebook_code_cells_join_with_magics_commented(tmp_path: Path) -> None:
    raw = notebook(
        [
            markdown("# Train\nwith `GRPOTrainer`"),
            code(["%pip install trl\n", "!ls -la\n", "import trl\n"]),
            markdown("next"),
            code("files = !ls\nfor f in files:\n    !echo {f}\n    print(f)\ntrainer = trl.GRPOTrainer()\n"),
            code(""),
            code("%%bash\nfor x in a b; do echo $x; done"),
            code("%%time\ntrainer.train()"),
            code("if COLAB:\n    !pip install unsloth \\\n        trl\nelse:\n    !pip install vllm\n"),
        ]
    )
    got = read_source(write(tmp_path, "train.ipynb", raw))
    assert got.kind == "notebook" and got.error is None and got.text is not None
    lines = got.text.splitlines()
    assert lines[:4] == ["pass  # %pip install trl", "pass  # !ls -la", "import trl", ""]
    assert "    pass  # !echo {f}" in lines and "# for x in a b; do echo $x; done" in lines
    # An escape that was a block's only statement leaves a valid block; its continuation lines go too.
    assert lines[-5:] == [
        "if COLAB:",
        "    pass  # !pip install unsloth \\",
        "        # trl",
        "else:",
        "    pass  # !pip install vllm",
    ]
    parsed = parse_python(got.text)
    assert (parsed.error, parsed.partial) == (None, False)
    assert got.line_map is not None and len(got.line_map) == len(lines)
    assert got.line_map[lines.index("trainer = trl.GRPOTrainer()")] == (3, 5)
    assert got.line_map[lines.index("trainer.train()")] == (6, 2)
    assert got.line_map[3] == (3, 0)  # the blank line between two cells belongs to the next one


def test_a_percent_format_script_reads_its_cells_magics_as_comments_line_for_line(tmp_path: Path) -> None:
    script = (
        "# %% [markdown]\n# Generate pairs\n# %%\n!pip install trl\nimport trl\n"
        "# %%\n%%bash\necho hi\n# %%\nif colab:\n    !ls\nratio = (3\n         % 2)\nok = (1\n      != 2)\n"
    )
    got = read_source(write(tmp_path, "gen.py", script.encode()))
    assert got.error is None and got.text is not None
    lines = got.text.splitlines()
    assert len(lines) == len(script.splitlines())
    assert lines[3] == "pass  # !pip install trl" and lines[6:8] == ["# %%bash", "# echo hi"]
    assert lines[10] == "    pass  # !ls"
    # an expression continued with an operator is no magic
    assert lines[12] == "         % 2)" and lines[14] == "      != 2)"
    assert parse_python(got.text).error is None
    # without cell markers a line starting with ! stays what it is: a syntax error
    plain = read_source(write(tmp_path, "plain.py", b"!pwd\nimport os\n"))
    assert plain.text == "!pwd\nimport os\n"
    assert parse_python(plain.text).error is not None


@given(st.text(alphabet="#% !\n\rab=()", max_size=80))
def test_a_percent_script_keeps_every_line(text: str) -> None:
    assert len(NEWLINE.split(percent_script(text))) == len(NEWLINE.split(text))


def test_notebook_line_map_leads_back_to_a_parse_error() -> None:
    got = source_from_bytes(notebook([code("x = 1\n"), code("y = 2\ndef f(:\n    pass\n")]), "nb.ipynb")
    assert got.text is not None and got.line_map is not None
    parsed = parse_python(got.text)
    assert parsed.error is not None and parsed.error.startswith("syntax error at line 4,")
    assert got.line_map[4 - 1] == (1, 2)


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b'{"cells": [', "malformed notebook JSON"),
        (b"\xff\xfe", "malformed notebook JSON"),
        (b"[" * 100_000, "malformed notebook JSON"),
        (b"[1, 2]", "not a Jupyter notebook"),
        (b'{"worksheets": []}', "not a Jupyter notebook"),
        (b'{"cells": [1]}', "not a Jupyter notebook (cell 0 is not an object)"),
        (b'{"cells": [{"cell_type": "code", "source": [1]}]}', "not a Jupyter notebook (cell 0: source"),
    ],
)
def test_malformed_notebook_is_an_error(raw: bytes, said: str) -> None:
    got = source_from_bytes(raw, "nb.ipynb")
    assert got.text is None and got.error is not None and got.error.startswith(said)


# ------------------------------------------------------------------------------------------- parsing


def test_valid_source_parses_whole() -> None:
    parsed = parse_python("import trl\n\ntrainer = trl.SFTTrainer()\n")
    assert parsed.module is not None and (parsed.error, parsed.partial) == (None, False)


def test_the_tree_is_libcsts_own_although_its_parser_does_not_validate_it() -> None:
    text = "import trl\n\n@torch.no_grad()\ndef f(x, *a, y=1, **k) -> int:\n    return not (x or y)[0]\n"
    parsed = parse_python(text)
    assert parsed.module is not None
    assert parsed.module.deep_equals(libcst.parse_module(text))
    assert parsed.module.code == text


def test_nodes_built_outside_the_parser_are_still_validated() -> None:
    parse_python("x = 1\n")
    with pytest.raises(libcst.CSTValidationError):
        libcst.Name("")  # (an empty name is what libcst's own check refuses)
    refused: list[bool] = []

    def on_another_thread() -> None:
        try:
            libcst.Name("")
        except libcst.CSTValidationError:
            refused.append(True)

    worker = threading.Thread(target=on_another_thread)
    worker.start()
    worker.join()
    assert refused == [True]


@pytest.mark.parametrize("threads", [1, 2])
def test_either_way_of_not_validating_gives_libcsts_tree_and_leaves_validation_on(
    threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one thread alive: the check is off for the parse; more: only the parsing thread skips it
    monkeypatch.setattr(threading, "active_count", lambda: threads)
    text = "def f(x, *, y=1):\n    return [x async for x in y if not x] or {**y}\n"
    parsed = parse_python(text, guarded=False)
    assert parsed.module is not None and parsed.module.deep_equals(libcst.parse_module(text))
    assert parse_python("def broken(:\n", guarded=False).module is None
    with pytest.raises(libcst.CSTValidationError):
        libcst.Name("")


def test_a_failed_parse_leaves_validation_on() -> None:
    assert parse_python("def broken(:\n").module is None
    with pytest.raises(libcst.CSTValidationError):
        libcst.Name("")


BROKEN_IN_THE_MIDDLE = """\
import trl


def before():
    return trl.SFTTrainer()


def broken(:
    pass


@decorated
def after():
    if True:
        return 1
    else:
        return 2
"""


def test_syntax_error_in_the_middle_keeps_the_rest_at_its_lines() -> None:
    parsed = parse_python(BROKEN_IN_THE_MIDDLE)
    assert parsed.partial and parsed.module is not None
    assert parsed.error is not None and parsed.error.startswith("syntax error at line 8, column 12:")
    assert_lines_kept(BROKEN_IN_THE_MIDDLE, parsed.module.code)
    assert line_of_def(parsed.module, "before") == 4
    assert line_of_def(parsed.module, "after") == 13  # the def line; its decorator is line 12
    assert "def broken" not in parsed.module.code and SKIPPED_LINE in parsed.module.code


def test_crlf_lines_keep_their_numbers() -> None:
    text = BROKEN_IN_THE_MIDDLE.replace("\n", "\r\n")
    parsed = parse_python(text)
    assert parsed.module is not None and line_of_def(parsed.module, "after") == 13


def test_unclosed_bracket_does_not_swallow_the_next_def() -> None:
    text = "x = foo(1,\n\ndef later():\n    return 2\n"
    parsed = parse_python(text)
    assert parsed.module is not None and line_of_def(parsed.module, "later") == 3
    assert parsed.error == "syntax error at line 1, column 8: '(' was never closed"


def test_a_bad_def_line_does_not_swallow_the_code_after_it() -> None:
    text = "from trl import SFTTrainer\n\ndef oops(:\n    pass\n\nSFTTrainer(model='m').train()\n"
    parsed = parse_python(text)
    assert parsed.error == "syntax error at line 3, column 10: invalid syntax"
    assert parsed.module is not None and parsed.module.code.endswith("\nSFTTrainer(model='m').train()\n")
    assert_lines_kept(text, parsed.module.code)


def test_tokenizer_errors_are_placed_on_their_line() -> None:
    parsed = parse_python("x = 1\ny = 'unterminated\nz = 3\n")
    assert parsed.error is not None and parsed.error.startswith("syntax error at line 2,")
    assert parsed.module is not None and parsed.module.code.endswith("z = 3\n")


PYTHON2 = """\
import os

print "hello", os.name

def shout(x):
    return x.upper()

exec "y = 1"
"""


def test_python2_file_is_named_and_its_valid_chunks_kept() -> None:
    parsed = parse_python(PYTHON2)
    assert parsed.error == "Python 2 code (print statement) at line 3"
    assert parsed.partial and parsed.module is not None
    assert line_of_def(parsed.module, "shout") == 5
    assert "import os" in parsed.module.code and "exec" not in parsed.module.code


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("x = 1\ny = `x`\n", "backticks"),
        ("try:\n    pass\nexcept ValueError, e:\n    x = (\n", "except X, e"),
        ("p = ur'\\d'\n", "ur'' string"),
        ("def f():\n    exec code in ns\n", "exec statement"),
        ("raise ValueError, 'bad'\n", "raise X, message"),
    ],
)
def test_python2_constructs_are_named(text: str, what: str) -> None:
    parsed = parse_python(text)
    assert parsed.error is not None and parsed.error.startswith(f"Python 2 code ({what}) at line ")


@pytest.mark.parametrize(
    "text",
    [
        "```python\nx = 1\n```\n",  # a Markdown fence pasted into a .py file
        "print (x)\nprint = 3\nprint -1\ny = (\n",  # Python 3 uses of the name print, then an error
        'def f():\n    """\n    print "x" in a docstring\n    """\n    x = (\n',
    ],
)
def test_python3_mistakes_are_not_called_python2(text: str) -> None:
    parsed = parse_python(text)
    assert parsed.error is not None and "Python 2" not in parsed.error


def test_nothing_parsable_gives_no_module() -> None:
    parsed = parse_python("def f(:\n    pass\n")
    assert parsed.module is None and not parsed.partial
    assert parsed.error is not None and parsed.error.startswith("syntax error at line 1,")


def test_lone_surrogate_is_an_error_not_an_exception() -> None:
    parsed = parse_python("x = '\ud800'\n")
    assert parsed.module is None and parsed.error is not None and "cannot parse" in parsed.error


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("(" * 10_000 + ")" * 10_000, f"nesting deeper than {MAX_NESTING} (brackets, line 1)"),
        ("x = " + "[" * 300 + "]" * 300 + "\n", f"nesting deeper than {MAX_NESTING} (brackets, line 1)"),
        (
            "".join(" " * i + "if x:\n" for i in range(300)) + " " * 300 + "pass\n",
            f"nesting deeper than {MAX_NESTING} (indentation, line {MAX_NESTING + 2})",
        ),
        (
            "x = 1\ny = " + "+".join(["a"] * 10_000) + "\n",
            f"nesting deeper than {MAX_CHAIN} (a chain of operators, line 2)",
        ),
        ("x = " + "-" * 100_000 + "1\n", f"nesting deeper than {MAX_CHAIN} (a chain of operators, line 1)"),
        ("x = a" + "()" * 10_000 + "\n", f"nesting deeper than {MAX_CHAIN} (a chain of operators, line 1)"),
        ("x = " + "not " * 10_000 + "y\n", f"nesting deeper than {MAX_CHAIN} (a chain of operators, line 1)"),
        (
            "if a:\n    pass\n" + "elif a:\n    pass\n" * 10_000,
            f"nesting deeper than {MAX_CHAIN} (a chain of elif",
        ),
    ],
    ids=["parens", "lists", "indentation", "binary-chain", "unary-chain", "call-chain", "not-chain", "elif"],
)
def test_deep_nesting_is_refused_quickly_without_crashing(text: str, said: str) -> None:
    started = time.perf_counter()
    parsed = parse_python(text)
    assert time.perf_counter() - started < 2
    assert (parsed.module, parsed.partial) == (None, False)
    assert parsed.error is not None and parsed.error.startswith(said)


def test_nesting_inside_strings_and_comments_does_not_count() -> None:
    text = (
        "s = '"
        + "(" * 500
        + "'\n# "
        + "[" * 500
        + "\nt = '''\n"
        + "{" * 500
        + "\n'''\nu = (\n"
        + "1,\n" * 5000
        + ")\n"
    )
    assert parse_python(text).error is None


def test_a_large_file_is_read_and_scanned_in_linear_time() -> None:
    raw = b"".join(b"variable_%d = %d  # a comment (with [brackets]\n" % (i, i) for i in range(30_000))
    assert 1_400_000 < len(raw) < MAX_SOURCE_BYTES
    started = time.perf_counter()
    got = source_from_bytes(raw, "big.py")
    assert got.text is not None and got.error is None
    assert source._scan(got.text).problem is None
    assert time.perf_counter() - started < 2


@pytest.mark.slow
def test_a_large_file_parses_whole() -> None:
    text = "".join(f"variable_{i} = {i}  # a comment (with [brackets]\n" for i in range(30_000))
    assert len(text) > 1_400_000
    parsed = parse_python(text)
    assert parsed.module is not None and parsed.error is None
    assert len(parsed.module.body) == 30_000


# ------------------------------------------------------------------------------------------ properties

PYTHONISH = st.text(alphabet=st.sampled_from(list("()[]{}'\"#\\\n\r \t:=+-.,;@`%!abcdefilnoprtux0123456789")))


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), PYTHONISH))
@example("\\\n0\r:")  # a leading backslash continuation: libcst drops that line when it parses
def test_parse_python_never_raises(text: str) -> None:
    parsed = parse_python(text)
    assert parsed.module is not None or parsed.error is not None
    if parsed.module is None:
        assert not parsed.partial
    elif parsed.partial:
        assert parsed.error is not None
        assert_lines_kept(text, parsed.module.code)


@settings(max_examples=300, deadline=None)
@given(st.binary(), st.sampled_from(["a.py", "b.ipynb", "c.yaml", "d.sh", "e.bin"]))
def test_source_from_bytes_never_raises(raw: bytes, name: str) -> None:
    got = source_from_bytes(raw, name)
    assert (got.text is None) != (got.error is None)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
CELL = st.fixed_dictionaries(
    {
        "cell_type": st.sampled_from(["code", "markdown", "raw"]),
        "source": st.one_of(PYTHONISH, st.lists(PYTHONISH, max_size=4), JSON),
    }
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(JSON, st.fixed_dictionaries({"cells": st.lists(CELL, max_size=5)})))
def test_notebooks_never_raise_and_map_every_line(document: Any) -> None:
    got = source_from_bytes(json.dumps(document).encode(), "nb.ipynb")
    if got.text is not None:
        assert got.line_map is not None and len(got.line_map) == len(NEWLINE.split(got.text)) - 1
        parse_python(got.text)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_wide_text_with_a_byte_order_mark_is_read_with_a_problem(encoding: str) -> None:
    code = "from trl import SFTTrainer\nSFTTrainer(model=m).train()\n"
    raw = code.encode(encoding)
    if encoding == "utf-16-be":
        raw = codecs.BOM_UTF16_BE + raw
    got = source_from_bytes(raw, "train.py")
    assert got.text == code
    assert got.error is not None and "byte-order mark" in got.error and "CPython does not run it" in got.error


def test_wide_text_cut_mid_character_is_refused() -> None:
    got = source_from_bytes(codecs.BOM_UTF16_LE + "x = 1\n".encode("utf-16-le") + b"\x00", "a.py")
    assert got.text is None and got.error is not None and "utf-16-le" in got.error


def test_a_notebook_is_not_read_as_wide_text() -> None:
    got = source_from_bytes(codecs.BOM_UTF16_LE + '{"cells": []}'.encode("utf-16-le"), "nb.ipynb")
    assert got.text is None and got.error is not None


def test_wide_text_is_read_as_any_python_file_is() -> None:
    percent = "# %%\n!pip install trl\n# %%\nfrom trl import SFTTrainer\n"
    got = source_from_bytes(percent.encode("utf-16"), "nb.py")
    assert got.text == source_from_bytes(percent.encode(), "nb.py").text


def test_a_utf16_mark_before_other_bytes_is_not_read_as_utf16() -> None:
    got = source_from_bytes(codecs.BOM_UTF16_LE + b"import torch\n", "a.py")
    assert got.text is None and got.error is not None and "not UTF-8 text" in got.error


def test_utf16_text_starting_with_nul_is_not_taken_for_utf32() -> None:
    got = source_from_bytes(codecs.BOM_UTF16_LE + "\x00x = 1\n".encode("utf-16-le"), "a.py")
    assert got.text == "\x00x = 1\n"


def test_wide_text_that_does_not_parse_says_both(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_bytes("def broken(:\n".encode("utf-16"))
    got = classify_path(tmp_path / "bad.py")
    assert got.error is not None and "byte-order mark" in got.error and "syntax error" in got.error
