"""Source files as tokens through tree-sitter (host-only, pure): the lexing half of the source
policy's readers for Go, Rust and Java (issue 34), on the parse layer of utils/judging/syntax.py.

A language declares a `Lexicon`, a small table of node types: which nodes are literals (and how
a literal's text becomes its value), which are comments, how the compiler sees the text before
lexing (Java's unicode escapes) and an identifier's name (Rust's `r#exit`). `lex` turns one parse
into the token stream the fact readers of utils/judging/source_facts.py read (`chains`,
`string_facts`): every leaf of the tree in source order, a literal as one decoded value,
comments aside. The language modules read their imports, aliases and directives from it.

Error recovery cannot hide a name: every leaf counts, inside ERROR nodes too; text no leaf
covers (an ERROR leaf, bytes tree-sitter skipped) is read by a loose lexer of identifiers,
quoted strings and single characters; and each outermost ERROR region is re-read on its own
(`recover`: comments skipped, an unterminated string to its line's end) into a second stream
whose facts the readers add (`Lexed.streams`). The readers match token patterns, never the
tree's shape, so a misparse changes no fact the tokens still show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterator

import tree_sitter

from .source_facts import ID, NUM, PUNCT, STR, Token, TokenList, decode_escapes
from .syntax import Source

_IDENTIFIER = re.compile(r"[^\W\d]\w*|\$[\w$]*")
# The loose lexer of text no leaf covers: identifiers, quoted strings, numbers, any other
# character but the path separators `::` and `->` (no comments: nothing it reads may disappear).
_LOOSE = re.compile(r"(?P<id>[^\W\d][\w$]*)|(?P<str>\"(?:[^\"\\\n]|\\.)*\"?)|(?P<num>\d\w*)|(?P<punct>::|->|\S)")
# The re-reading of an ERROR region, added to the tree's tokens: comments skipped, a string
# running to its line's end when unterminated (as the old tokenizer read it), raw strings, chars.
_RECOVERY = re.compile(r"(?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))|(?P<str>\"(?:[^\"\\\n]|\\.)*\"?|'(?:[^'\\\n]|\\.)')"
                       r"|(?P<raw>`[^`]*`?)|(?P<id>[^\W\d][\w$]*)|(?P<num>\d\w*)|(?P<punct>::|->|\S)", re.S)


@dataclass(frozen=True, kw_only=True)
class Lexicon:
    """A language's reading of its tree: node types, not code."""

    language: str                                       # the grammar (utils/judging/syntax.py)
    strings: dict[str, Callable[[str], str]]            # literal node type -> its value from its text
    comments: frozenset[str]                            # comment node types (dropped, kept aside)
    prepare: Callable[[str], str] = field(default=lambda text: text)  # text as the compiler lexes it
    spelling: Callable[[str], str] = field(default=lambda text: text)  # an identifier leaf's name


def quoted(text: str) -> str:
    """A literal with escapes: its body between the first and last quote, decoded."""
    return decode_escapes(between(text))


def between(text: str) -> str:
    """A literal's body: after its opening quote (and any prefix: `b"`, `r#"`, `\"\"\"`) up to
    its closing one (an unterminated literal runs to its end)."""
    quote = min((index for index in map(text.find, "\"'`") if index >= 0), default=-1)
    if quote < 0:
        return text
    mark = text[quote]
    width = 3 if text.startswith(mark * 3, quote) and len(text) >= quote + 6 else 1
    closing = mark * width + "#" * text[:quote].count("#")  # Rust's r#"…"#
    body = text[quote + width:]
    return body[:-len(closing)] if body.endswith(closing) else body


@dataclass(frozen=True)
class Lexed:
    tokens: TokenList      # the tree's leaves
    recovered: TokenList   # the ERROR regions re-read by `_RECOVERY` (empty when the parse is clean)
    comments: list[Token]  # each comment's text as written and its first line
    has_errors: bool

    @property
    def streams(self) -> tuple[TokenList, ...]:
        """What a reader reads, its facts united: the leaves, then any re-read ERROR region."""
        return (self.tokens, self.recovered) if self.recovered else (self.tokens,)


def lex(text: str, lexicon: Lexicon) -> Lexed:
    source = Source(lexicon.language, lexicon.prepare(text))
    lexer = _Lexer(source, lexicon)
    lexer.run()
    return Lexed(TokenList(lexer.out), TokenList(lexer.recovered), lexer.comments, source.has_errors)


def recover(text: str, line: int, spelling: Callable[[str], str]) -> Iterator[Token]:
    """The tokens of an ERROR region read without the grammar."""
    for match, at in _lines(_RECOVERY.finditer(text), text, line):
        if match["str"] or match["raw"]:
            value = match.group(0)
            yield Token(STR, between(value) if match["raw"] else quoted(value), at)
        elif match["id"]:
            yield Token(ID, spelling(match["id"]), at)
        elif match["num"] or match["punct"]:
            yield Token(NUM if match["num"] else PUNCT, match.group(0), at)


def _lines(matches: Iterator[re.Match[str]], text: str, line: int) -> Iterator[tuple[re.Match[str], int]]:
    """Each match with its line, counted as the matches advance (linear in the text)."""
    counted = 0
    for match in matches:
        line += text.count("\n", counted, match.start())
        counted = match.start()
        yield match, line


class _Lexer:
    def __init__(self, source: Source, lexicon: Lexicon) -> None:
        self.source, self.lexicon = source, lexicon
        self.out: list[Token] = []
        self.comments: list[Token] = []
        self.recovered: list[Token] = []
        self.recovered_to = 0
        self.covered = 0  # the byte up to which nodes have accounted for the text

    def run(self) -> None:
        for node in self._units():
            self._gap(node.start_byte, node.start_point.row + 1)
            self._unit(node)
            self.covered = max(self.covered, node.end_byte)
        self._gap(len(self.source.data), self.source.root.end_point.row + 1)

    def _units(self) -> Iterator[tree_sitter.Node]:
        """The nodes read whole, in source order: leaves, literals, comments."""
        stack = [self.source.root]
        while stack:
            node = stack.pop()
            if node.child_count == 0 or node.type in self.lexicon.strings or node.type in self.lexicon.comments:
                yield node
            else:
                self._note_error(node)
                stack.extend(reversed(node.children))

    def _note_error(self, node: tree_sitter.Node) -> None:
        """An outermost ERROR node: its text re-read loosely (`recover`)."""
        if node.type == "ERROR" and node.start_byte >= self.recovered_to:
            text = self.source.text_of(node)
            self.recovered += recover(text, node.start_point.row + 1, self.lexicon.spelling)
            self.recovered_to = node.end_byte

    def _unit(self, node: tree_sitter.Node) -> None:
        text, line = self.source.text_of(node), node.start_point.row + 1
        if node.start_byte < self.covered or not text:
            return  # zero-width (MISSING) or already read
        if node.type in self.lexicon.comments:
            self.comments.append(Token("comment", text, line))
        elif node.type in self.lexicon.strings:
            self.out.append(Token(STR, self.lexicon.strings[node.type](text), line))
        elif node.is_error or node.type == "ERROR":
            self._loose(text, line)
        else:
            self._leaf(text, line)

    def _leaf(self, text: str, line: int) -> None:
        name = self.lexicon.spelling(text)
        if text[:1].isdigit():
            self.out.append(Token(NUM, text, line))
        elif _IDENTIFIER.fullmatch(name):
            self.out.append(Token(ID, name, line))
        elif re.search(r"\w", text):
            self._loose(text, line)  # a keyword with its punctuation (`macro_rules!`)
        else:
            self.out.append(Token(PUNCT, text, line))

    def _gap(self, end: int, line: int) -> None:
        """Text between the last node read and `end` that is not white space: read loosely."""
        if end > self.covered:
            gap = self.source.data[self.covered:end].decode("utf-8", errors="surrogateescape")
            if gap.strip():
                self._loose(gap, line - gap.count("\n"))

    def _loose(self, text: str, line: int) -> None:
        for match, at in _lines(_LOOSE.finditer(text), text, line):
            if match["str"]:
                self.out.append(Token(STR, quoted(match["str"]), at))
            elif match["id"]:
                self.out.append(Token(ID, self.lexicon.spelling(match["id"]), at))
            else:
                self.out.append(Token(NUM if match["num"] else PUNCT, match.group(0), at))
