"""Go's package-level case tables, read from the test files' text: shared by the mutated table
canaries (utils/languages/go.py, docs/go-table-canaries.md) and the variants
(utils/languages/go_variants.py, docs/variants-go.md). A table is `var NAME = []T{...}` at
package level; a test ranges over it (`RANGE`)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ..judging.canaries import CanaryError, call_arguments, line_end, matching_brace, plain_literal
from ..judging.syntax import Source

TABLE = re.compile(r"^var (?P<name>\w+) = (?P<type>\[\](?:struct\b|[\w.]+))", re.M)
RANGE = re.compile(r"\bfor (?:(?P<index>\w+), )?(?P<var>\w+) (?P<op>:?=) range (?P<expr>[^{\n]+?) \{")
_GO_INT = re.compile(r"-?0[xXoObB]?[0-9a-fA-F_]+")
SCAN = {"backtick": True}


@dataclass(frozen=True)
class Table:
    text: str                   # the composite literal as written: `[]T{...}`
    fields: tuple[str, ...]     # the element struct's fields in order (() when unknown)
    entries: tuple[tuple[int, int], ...]  # each element's span in `text`
    body: int = 0               # where the entries' `{` is in `text`


def tables(every_test: str) -> dict[str, Table]:
    """The package-level tables of the test files (`var name = []T{...}`), by name."""
    tables = {}
    for match in TABLE.finditer(every_test):
        try:
            table = table_at(every_test, match)
        except CanaryError:
            continue
        if table is not None:
            tables[match["name"]] = table
    return tables


def table_at(text: str, match: re.Match) -> Table | None:
    start = match.start("type")
    if match["type"].endswith("struct"):
        brace = text.index("{", match.end("type"))
        type_end = matching_brace(text, brace, backtick=True)
        fields = struct_fields(text[brace + 1:type_end - 1])
    else:
        type_end = match.end("type")
        fields = named_struct_fields(text, match["type"][2:])
    opening = type_end + len(text[type_end:]) - len(text[type_end:].lstrip(" \t"))
    if not text.startswith("{", opening):
        return None
    end = matching_brace(text, opening, backtick=True)
    literal = text[start:end]
    entries = call_arguments(literal, opening - start, **SCAN) or []
    return Table(literal, fields, tuple(_without_comments(literal, span) for span in entries), opening - start)


def _without_comments(text: str, span: tuple[int, int]) -> tuple[int, int]:
    start, end = span
    while text.startswith("//", start):
        start = line_end(text, start)
        start += len(text[start:end]) - len(text[start:end].lstrip())
    return start, end


def struct_fields(body: str) -> tuple[str, ...]:
    """Field names of a struct body in order; () when a field is embedded (positions unknown)."""
    names: list[str] = []
    for line in re.split(r"[;\n]", re.sub(r"//[^\n]*", "", body)):
        match = re.match(r"\s*(\w+(?:\s*,\s*\w+)*)\s+\S", line)
        if match is None:
            if line.strip():
                return ()
            continue
        names += [name.strip() for name in match[1].split(",")]
    return tuple(names)


def named_struct_fields(text: str, name: str) -> tuple[str, ...]:
    match = re.search(rf"^type {re.escape(name)} struct \{{", text, re.M)
    if match is None:
        return ()
    return struct_fields(text[match.end():matching_brace(text, match.end() - 1, backtick=True) - 1])


def entry_values(table: Table, entry: tuple[int, int]) -> list[tuple[str, int, int]]:
    """(field, start, end) of each element of one table entry `{...}`, spans in the table."""
    if not table.text.startswith("{", entry[0]):
        return []
    elements = call_arguments(table.text, entry[0], **SCAN) or []
    values = []
    for index, (start, end) in enumerate(elements):
        keyed = re.match(r"(\w+)\s*:\s*", table.text[start:end])
        if keyed:
            values.append((keyed[1], start + keyed.end(), end))
        elif index < len(table.fields):
            values.append((table.fields[index], start, end))
    return values


def go_value(source: str) -> int | str | bool | None:
    """A plain Go literal: a decimal, hexadecimal, octal or binary integer, a plain
    double-quoted string, true or false."""
    value = plain_literal(source, "\"", ("false", "true"))
    if value is None and _GO_INT.fullmatch(source):
        try:
            return int(source.replace("_", ""), 0)
        except ValueError:
            return None
    return value


def go_literal(value: int | str | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


def go_string(source: str) -> str | None:
    """The text of a Go string literal (an interpreted one's simple escapes, a raw one as is)."""
    if len(source) >= 2 and source[0] == source[-1] == "`":
        return source[1:-1]
    if not (len(source) >= 2 and source[0] == source[-1] == '"') or "\\u" in source or "\\x" in source:
        return None
    escapes = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'"}
    return re.sub(r"\\(.)", lambda match: escapes.get(match[1], match[0]), source[1:-1])


def uses(name: str, text: str) -> int:
    """How often Go code names `name` (identifiers of the syntax tree: not in a comment, a
    string or as a field); where the text does not parse, every spelling counts."""
    counts = _identifier_counts(text)
    return counts.get(name, 0) if counts is not None else len(re.findall(rf"(?<![\w.]){name}\b", text))


@functools.lru_cache(maxsize=64)
def _identifier_counts(text: str) -> dict[str, int] | None:
    """Each identifier's count in one parse of `text` (None when it does not parse): every
    table and every test of a package asks of the same joined text."""
    source = Source("go", text)
    if source.has_errors:
        return None
    counts: dict[str, int] = {}
    for node in source.walk():
        if node.type == "identifier":
            counts[source.text_of(node)] = counts.get(source.text_of(node), 0) + 1
    return counts
