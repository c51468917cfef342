"""Line and column of reported nodes, without libcst's PositionProvider.

PositionProvider regenerates the whole module's code to count positions (about twice the parse here),
for every file, although only a few nodes per file are ever reported. Instead, a reported node's
first line of code is searched in the text: where it occurs once, that is the node; where it recurs but
its statement's first line does not, it is the first occurrence from that statement on. Only when
both recur is the file parsed once more, with ``ast`` (an eighth of libcst's parse): the
statements of both trees are paired in order, which gives the node's statement its line, and the
node is found by its first line within that statement's lines.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator, Sequence

import libcst as cst
from libcst._nodes.internal import CodegenState  # the state libcst's own code_for_node writes into

from arb_audit.analyzer.detector import Finding

MAX_EXCERPT = 160
"""Longest excerpt kept, in characters."""


def _suite(block: cst.BaseSuite | None) -> Sequence[cst.CSTNode]:
    return block.body if block is not None else ()


def _pairs(
    body: Sequence[cst.CSTNode], statements: Sequence[ast.stmt]
) -> Iterator[tuple[cst.CSTNode, ast.stmt]]:
    """Pair libcst statements with ``ast`` statements of the same block, recursively."""
    index = 0
    for node in body:
        if index >= len(statements):
            return
        if isinstance(node, cst.SimpleStatementLine | cst.SimpleStatementSuite):
            for small in node.body:
                if index < len(statements):
                    yield small, statements[index]
                    index += 1
            continue
        target = statements[index]
        index += 1
        yield node, target
        yield from _compound(node, target)


def _compound(node: cst.CSTNode, target: ast.stmt) -> Iterator[tuple[cst.CSTNode, ast.stmt]]:
    if isinstance(node, cst.FunctionDef | cst.ClassDef | cst.With) and isinstance(
        target, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.With | ast.AsyncWith
    ):
        yield from _pairs(_suite(node.body), target.body)
    elif type(node) is cst.If and isinstance(target, ast.If):
        yield from _pairs(_suite(node.body), target.body)
        if type(node.orelse) is cst.If and target.orelse:
            yield node.orelse, target.orelse[0]
            yield from _compound(node.orelse, target.orelse[0])
        elif type(node.orelse) is cst.Else:
            yield from _pairs(_suite(node.orelse.body), target.orelse)
    elif isinstance(node, cst.For | cst.While) and isinstance(target, ast.For | ast.AsyncFor | ast.While):
        yield from _pairs(_suite(node.body), target.body)
        if node.orelse is not None:
            yield from _pairs(_suite(node.orelse.body), target.orelse)
    elif isinstance(node, cst.Try | cst.TryStar) and isinstance(target, ast.Try | ast.TryStar):
        yield from _pairs(_suite(node.body), target.body)
        for handler, ast_handler in zip(node.handlers, target.handlers, strict=False):
            yield from _pairs(_suite(handler.body), ast_handler.body)  # type: ignore[attr-defined]
        if node.orelse is not None:
            yield from _pairs(_suite(node.orelse.body), target.orelse)
        if node.finalbody is not None:
            yield from _pairs(_suite(node.finalbody.body), target.finalbody)
    elif type(node) is cst.Match and isinstance(target, ast.Match):
        for case, ast_case in zip(node.cases, target.cases, strict=False):
            yield from _pairs(_suite(case.body), ast_case.body)


_EMPTY_BODY = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Pass()])])


def _header(node: cst.CSTNode) -> cst.CSTNode:
    """Return a compound statement (``class``, ``def``, ``if``...) with an empty body.

    Only its first line is wanted, and generating a whole class's code for it costs as much as the rest
    of the file's analysis.
    """
    if not isinstance(node, cst.BaseCompoundStatement) or isinstance(node, cst.Try | cst.TryStar | cst.Match):
        return node
    changes: dict[str, object] = {"body": _EMPTY_BODY}
    if getattr(node, "orelse", None) is not None:
        changes["orelse"] = None
    try:
        return node.with_changes(**changes)
    except (cst.CSTValidationError, TypeError):
        return node


class _FirstLineWritten(Exception):
    """Raised by :class:`_FirstLineState` once a node's first line of code is complete."""


class _FirstLineState(CodegenState):
    """libcst's code generation, stopped at the end of the first line that holds code.

    A reported call may span a hundred lines of arguments; only its first line is searched for.
    """

    def add_token(self, value: str) -> None:
        if "\n" in value and "".join(self.tokens).strip():
            self.tokens.append(value)
            raise _FirstLineWritten
        self.tokens.append(value)


def _first_line(module: cst.Module, node: cst.CSTNode | None) -> str:
    """Return the first line of a node's own code (comments and blank lines before a statement left out)."""
    if node is None:
        return ""
    if isinstance(getattr(node, "leading_lines", None), Sequence) and node.leading_lines:  # type: ignore[attr-defined]
        node = node.with_changes(leading_lines=())
    node = _header(node)
    state = _FirstLineState(default_indent=module.default_indent, default_newline=module.default_newline)
    try:
        with contextlib.suppress(_FirstLineWritten):
            node._codegen(state)
    except RecursionError:
        # libcst writes code by recursion: a first line nested too deep to write (600 operands added
        # in one expression) is located by its statement's line instead
        return ""
    code = "".join(state.tokens).strip()
    return code.splitlines()[0].strip() if code else ""


def locate(findings: list[Finding], module: cst.Module, text: str, partial: bool = False) -> None:
    """Fill ``line``, ``col`` and ``excerpt`` of every finding (statement precision at worst).

    A node's code is in the text at its place, so code that occurs once in the whole text is found
    by a search; only the findings whose code recurs need the second parse that pairs statements.
    ``partial``: the module holds only the parts of ``text`` that parsed (same line numbers).
    """
    if not findings:
        return
    lines = text.splitlines()
    ambiguous = []
    firsts: dict[int, str] = {}  # several detectors report on one node: its code is written once
    for finding in findings:
        key = id(finding.node)
        first = firsts.get(key)
        if first is None:
            first = firsts[key] = _first_line(module, finding.node)
        at = text.find(first) if first else -1
        if at >= 0 and text.find(first, at + 1) < 0:
            finding.line = text.count("\n", 0, at) + 1
            finding.col = at - (text.rfind("\n", 0, at) + 1)
        elif not _within_statement(finding, first, module, text):
            ambiguous.append((finding, first))
    if ambiguous:
        _locate_by_statement(ambiguous, module, text if not partial else module.code, lines)
    for finding in findings:
        if 0 < finding.line <= len(lines):
            finding.excerpt = lines[finding.line - 1].strip()[:MAX_EXCERPT]


def _within_statement(finding: Finding, first: str, module: cst.Module, text: str) -> bool:
    """Locate a finding whose code recurs by its statement, when the statement's first line is unique.

    The node lies in its statement, so its code's first occurrence from the statement's start on is
    the node (statement precision at worst). Saves the second parse for most recurring code.
    """
    if not first or finding.statement is None or finding.statement is finding.node:
        return False
    head = _first_line(module, finding.statement)
    at = text.find(head) if head else -1
    if at < 0 or text.find(head, at + 1) >= 0:
        return False
    found = text.find(first, at)
    if found < 0:
        return False
    finding.line = text.count("\n", 0, found) + 1
    finding.col = found - (text.rfind("\n", 0, found) + 1)
    return True


def _locate_by_statement(
    findings: list[tuple[Finding, str]], module: cst.Module, parsed: str, lines: list[str]
) -> None:
    """Locate findings through their statement's line (``ast``), then their code within it."""
    try:
        tree = ast.parse(parsed)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    where = {id(node): statement for node, statement in _pairs(module.body, tree.body)}
    for finding, first in findings:
        statement = where.get(id(finding.statement)) if finding.statement is not None else None
        if statement is None:
            continue
        finding.line, finding.col = statement.lineno, statement.col_offset
        end = statement.end_lineno or statement.lineno
        for number in range(statement.lineno, min(end, len(lines)) + 1):
            col = lines[number - 1].find(first) if first else -1
            if col >= 0:
                finding.line, finding.col = number, col
                break
