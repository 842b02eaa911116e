"""Source text read through tree-sitter (host-only, pure): the parse layer issue 34 asks for,
first used by the variant derivers of javascript, java and rust.

Grammars come from their PyPI wheels (requirements.txt). A `Source` keeps one parse of one
text and speaks in CHARACTER offsets of that text (tree-sitter's are byte offsets of its UTF-8
encoding), the offsets `Variant.edits` and `Planter.find_units` use.
"""

from __future__ import annotations

import bisect
import functools
from typing import Iterator

import tree_sitter

# language name -> the grammar wheel's module
_GRAMMARS = {
    "javascript": "tree_sitter_javascript",
    "java": "tree_sitter_java",
    "rust": "tree_sitter_rust",
    "go": "tree_sitter_go",
    "cpp": "tree_sitter_cpp",
    "python": "tree_sitter_python",
}


@functools.cache
def grammar(language: str) -> tree_sitter.Language:
    module = __import__(_GRAMMARS[language])
    return tree_sitter.Language(module.language())


class Source:
    """One text and its syntax tree."""

    def __init__(self, language: str, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8", errors="surrogateescape")
        self.tree = tree_sitter.Parser(grammar(language)).parse(self.data)

    @functools.cached_property
    def _byte_starts(self) -> list[int]:
        return _byte_offsets(self.text)  # built on the first `char` (the fact readers never ask)

    @property
    def root(self) -> tree_sitter.Node:
        return self.tree.root_node

    @property
    def has_errors(self) -> bool:
        return self.root.has_error

    def char(self, byte_offset: int) -> int:
        """The character offset of a byte offset (which starts a character)."""
        return bisect.bisect_right(self._byte_starts, byte_offset) - 1

    def span(self, node: tree_sitter.Node) -> tuple[int, int]:
        return self.char(node.start_byte), self.char(node.end_byte)

    def text_of(self, node: tree_sitter.Node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", errors="surrogateescape")

    def walk(self, node: tree_sitter.Node | None = None) -> Iterator[tree_sitter.Node]:
        """Every node under `node` (the root by default), itself first, in source order."""
        stack = [node or self.root]
        while stack:
            current = stack.pop()
            yield current
            stack.extend(reversed(current.children))


def _byte_offsets(text: str) -> list[int]:
    """The byte offset each character starts at, and the text's length in bytes last."""
    offsets, at = [], 0
    for char in text:
        offsets.append(at)
        at += len(char.encode("utf-8", errors="surrogateescape"))
    offsets.append(at)
    return offsets
