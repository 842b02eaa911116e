"""JavaScript source as facts for the source policy, read through tree-sitter (one parse per file,
utils/judging/syntax.py). Pure, host-only.

What a file yields (the kinds of utils/judging/source_policy.py):
- NAME: every name as used, qualified: `process.binding`, `a["b"]` and `` a[`b`] `` read as `a.b`,
  `a?.b` as `a.b`, a computed `a[x]` as `a` and `a[]`, a member of anything else as `.b`
  (`f().constructor`), a call adds `name()`, an assignment `name=` (`a[x] = v` gives `a[]=`).
  A name whose root is bound where it is used (a parameter, let/const/var, function, class,
  catch, a destructured name) is `local:name`; an object key, a method or a field being defined
  is `key:name`. Identifier escapes (`\\u0070rocess`) are decoded.
- IMPORT: `import … from "m"`, `import "m"`, `export … from "m"`, `require("m")`, `import("m")`;
  a module named by anything but one literal, or `require` passed around, is `?`.
- STRING: every literal (escapes decoded), each template chunk, and each run of literals
  joined by `+` or through a template's `${"…"}` folded into one. Regex literals are no string.

An erroneous tree (a construct the grammar does not know: TypeScript, or a V8 extension an
attacker found) is read without `local:`/`key:` marks, so recovery can never make a global's
name look bound; every identifier-like word of an ERROR node's unparsed bytes is a name, and
so is every word of a regex literal (recovery may take a division for one: `yield /x()/ 2`);
a member expression recovery glued across an ERROR also gives its parts as names alone; and
imports are read from the tokens as written, whatever node recovery put them in. Measured by
bench/js_facts_diff.py: no file of the benchmark, the fixtures or the samples has a parse
error; of 4410 broken copies of the references (--mutations 30, seeds 1-3), the token reader
matched a rule this reader did not in 3: two that Node rejects, and one where the token reader
was wrong (a class field named `globalThis`).
"""

from __future__ import annotations

import re
from typing import Iterator, NamedTuple

import tree_sitter

from ..judging.source_policy import IMPORT, NAME, STRING, Fact
from ..judging.syntax import Source

Node = tree_sitter.Node

# Leaves that name something (`this`/`super`/`import.meta` are chain roots like identifiers).
_NAMES = {"identifier", "property_identifier", "shorthand_property_identifier", "private_property_identifier",
          "shorthand_property_identifier_pattern", "statement_identifier", "this", "super", "meta_property",
          "undefined"}
_ASSIGNS = {"=", "+=", "||=", "??=", "&&="}
_FUNCTIONS = {"function_declaration", "function_expression", "generator_function", "generator_function_declaration",
              "arrow_function", "method_definition"}
_WORD = re.compile(r"(?:[\w$]|\\u\{[0-9A-Fa-f]+\}|\\u[0-9A-Fa-f]{4})+")


def javascript_facts(text: str) -> tuple[Fact, ...]:
    source = Source("javascript", text)
    reader = _Reader(source)
    reader.read()
    return tuple(reader.facts)


class _Place(NamedTuple):
    """Where a node sits: its parent, the parent's field holding it, the next sibling's type.
    Kept by the walk, never asked of tree-sitter: `Node.parent` walks down from the root, and
    an attacker's deep nesting would make every question cost the depth."""
    parent: Node | None
    field: str | None
    after: str | None

    def holds(self, parent_type: str, field: str | None = None) -> bool:
        return self.parent is not None and self.parent.type == parent_type and (field is None or self.field == field)


def _events(root: Node) -> Iterator[tuple[Node, _Place, bool]]:
    """(node, place, True) on entering and (node, place, False) on leaving every node, without
    recursion (an attacker's nesting must not exhaust the stack)."""
    stack: list[tuple[Node, _Place, bool]] = [(root, _Place(None, None, None), True)]
    while stack:
        node, place, entering = stack.pop()
        yield node, place, entering
        if entering:
            stack.append((node, place, False))
            children = _children(node)
            for index in range(len(children) - 1, -1, -1):
                after = children[index + 1][0].type if index + 1 < len(children) else None
                stack.append((children[index][0], _Place(node, children[index][1], after), True))


def _children(node: Node) -> list[tuple[Node, str | None]]:
    """(child, field) of each child, read with one cursor (asking a field per child index
    costs the index: a wide file would cost its width squared)."""
    cursor = node.walk()
    if not cursor.goto_first_child():
        return []
    children = [(cursor.node, cursor.field_name)]
    while cursor.goto_next_sibling():
        children.append((cursor.node, cursor.field_name))
    return children


# --- scopes ---------------------------------------------------------------------------------

_BLOCKS = {"statement_block", "program", "class_body", "switch_body", "class_static_block"}


def _declarations(root: Node) -> dict[int, set[str]]:
    """{scope node id: the names it binds}: let/const/var, function and class declarations in
    their enclosing block (`var` too: the safe side), a function's parameters and a named
    function or class expression's own name in the function, `catch (e)` in its clause, a
    `for (let x …)` in the loop."""
    bound: dict[int, set[str]] = {}
    blocks: list[Node] = []
    parents: list[Node] = []
    for node, place, entering in _events(root):
        if not entering:
            parents.pop()
            if blocks and blocks[-1] == node:
                blocks.pop()
            continue
        loop = node.type == "variable_declarator" and len(parents) > 1 and parents[-2].type == "for_statement"
        for scope, name in _bindings(node, parents[-2] if loop else (blocks[-1] if blocks else node)):
            bound.setdefault(scope.id, set()).add(name)
        parents.append(node)
        if node.type in _BLOCKS:
            blocks.append(node)
    return bound


def _bindings(node: Node, block: Node) -> Iterator[tuple[Node, str]]:
    """(scope, name) of each name `node` declares; `block` is where a declaration binds."""
    kind = node.type
    if kind in ("variable_declarator", "function_declaration", "generator_function_declaration", "class_declaration"):
        yield from ((block, name) for name in _pattern_names(node.child_by_field_name("name")))
    elif kind in ("function_expression", "generator_function", "class"):
        yield from ((node, name) for name in _pattern_names(node.child_by_field_name("name")))
    if kind in _FUNCTIONS:
        # Parameters bind in the parameter list and the body, never in a method's computed key,
        # which runs in the enclosing scope (red team 10: `{ [process.exit(6)](process) {} }`).
        scopes = [child for child in (node.child_by_field_name(field) for field in ("parameters", "parameter", "body"))
                  if child is not None]
        for field in ("parameters", "parameter"):
            yield from ((scope, name) for name in _pattern_names(node.child_by_field_name(field)) for scope in scopes)
    elif kind == "catch_clause":
        yield from ((node, name) for name in _pattern_names(node.child_by_field_name("parameter")))
    elif kind == "for_in_statement" and any(child.type in ("let", "const", "var") for child in node.children):
        yield from ((node, name) for name in _pattern_names(node.child_by_field_name("left")))


def _pattern_names(pattern: Node | None) -> list[str]:
    """The names a binding pattern binds: never a destructured key, never a default value."""
    names, stack = [], [pattern] if pattern is not None else []
    while stack:
        node = stack.pop()
        if node.type in ("identifier", "shorthand_property_identifier_pattern"):
            names.append(_decoded(node.text.decode("utf-8", "surrogateescape")))
        elif node.type in ("assignment_pattern", "object_assignment_pattern"):
            stack.append(node.child_by_field_name("left"))
        elif node.type == "pair_pattern":
            stack.append(node.child_by_field_name("value"))
        elif node.type in ("formal_parameters", "object_pattern", "array_pattern", "rest_pattern"):
            stack.extend(child for child in node.named_children if child.type != "comment")
    return names


# --- names ----------------------------------------------------------------------------------

def _decoded(word: str) -> str:
    """An identifier with its `\\uXXXX` / `\\u{…}` escapes read as the characters they name."""
    return re.sub(r"\\u\{([0-9A-Fa-f]+)\}|\\u([0-9A-Fa-f]{4})",
                  lambda m: _char(int(m.group(1) or m.group(2), 16)), word)


def _char(code: int) -> str:
    return chr(code) if code <= 0x10FFFF else "\ufffd"


def _consumed(place: _Place) -> bool:
    """Whether a node is part of a longer name: a member's object or property, a subscript's
    object (its name ends at the subscript)."""
    return place.holds("member_expression") or place.holds("subscript_expression", "object")


def _constant_key(subscript: Node) -> str | None:
    index = subscript.child_by_field_name("index")
    return literal(index) if index is not None else None


def _is_key(place: _Place) -> bool:
    """An object key, a method or a field being defined, or a destructured key."""
    return (place.holds("pair", "key") or place.holds("pair_pattern", "key") or place.holds("method_definition", "name")
            or place.holds("field_definition", "property"))


def _called(place: _Place) -> bool:
    """Whether the node at `place` is called (`f()`, `new F()`; not a tagged template)."""
    if place.holds("call_expression", "function"):
        return place.parent.child_by_field_name("arguments").type == "arguments"
    return place.holds("new_expression", "constructor") and place.parent.child_by_field_name("arguments") is not None


def _in_sum(place: _Place) -> bool:
    """Whether the node at `place` is the left operand of a `+` (its sum folds it)."""
    return place.holds("binary_expression", "left") and place.parent.child_by_field_name("operator").type == "+"


def _root(node: Node) -> Node:
    while node.type in ("member_expression", "subscript_expression"):
        node = node.child_by_field_name("object")
    return node


class _Reader:
    def __init__(self, source: Source) -> None:
        self.source = source
        self.facts: list[Fact] = []
        self.marks = not source.has_errors
        self.bound = _declarations(source.root) if self.marks else {}
        self.active: dict[str, int] = {}

    def read(self) -> None:
        for node, place, entering in _events(self.source.root):
            for name in self.bound.get(node.id, ()):
                self.active[name] = self.active.get(name, 0) + (1 if entering else -1)
            if entering:
                self.visit(node, place)
        if not self.marks:
            self.loose_imports()

    def visit(self, node: Node, place: _Place) -> None:
        kind = node.type
        if kind in _NAMES and not _consumed(place):
            self.name(node, place, self.text(node))
        elif kind == "member_expression":
            self.member(node, place)
        elif kind == "subscript_expression":
            self.subscript(node, place)
        elif kind in ("string", "template_string"):
            self.strings(node, place)
        elif kind == "binary_expression":
            self.folded(node, place)
        elif kind == "ERROR":
            self.unparsed(node)
        elif kind == "regex_pattern" and not self.marks:
            self.words(node, self.source.text_of(node))  # a division the grammar took for a regex
        elif kind == "regex" and (place.holds("await_expression") or place.holds("yield_expression")):
            # `await /…/g` is a division where `await` is a variable (a script; red team 10 ran
            # `var await = 2; await /process.exit(7)/g`): awaiting a regex is no honest code.
            self.words(node, self.source.text_of(node))
        elif kind == "jsx_text":
            self.add(STRING, node, self.text(node).strip())
        self.imports(node, place)

    # names

    def text(self, node: Node) -> str:
        return _decoded(self.source.text_of(node))

    def chain(self, node: Node) -> str:
        """The qualified name a member or subscript chain ending at `node` spells."""
        parts: list[str] = []
        while node is not None:
            if node.type == "member_expression":
                parts.append("." + self.text(node.child_by_field_name("property")))
            elif node.type == "subscript_expression" and _constant_key(node) is not None:
                parts.append("." + _constant_key(node))
            else:
                parts.append(self.text(node) if node.type in _NAMES else "")
                break
            node = node.child_by_field_name("object")
        return "".join(reversed(parts))

    def member(self, node: Node, place: _Place) -> None:
        if not _consumed(place):
            self.name(node, place, self.chain(node))
        if any(child.type == "ERROR" for child in node.children):  # recovery glued it across broken bytes
            for part in (node.child_by_field_name("object"), node.child_by_field_name("property")):
                if part is not None and part.type in _NAMES:
                    self.add(NAME, part, self.text(part))

    def subscript(self, node: Node, place: _Place) -> None:
        """`a["b"]` is the name `a.b`; a computed `a[x]` gives `a` and `a[]` (`a[]=` assigned)."""
        if _constant_key(node) is not None:
            if not _consumed(place):
                self.name(node, place, self.chain(node))
            return
        base = node.child_by_field_name("object")
        if base is None or (base.type == "subscript_expression" and _constant_key(base) is None):
            return
        name = self.chain(base) if base.type in _NAMES or base.type in ("member_expression", "subscript_expression") else ""
        if name:
            marked = self.mark(base, _Place(node, "object", "["), name)
            self.add(NAME, node, marked)
            self.add(NAME, node, marked + "[]")
            if place.after in _ASSIGNS:
                self.add(NAME, node, marked + "[]=")

    def name(self, node: Node, place: _Place, name: str) -> None:
        if not name:
            return
        marked = self.mark(node, place, name)
        self.add(NAME, node, marked)
        if _called(place):
            self.add(NAME, node, marked + "()")
        if place.after in _ASSIGNS:
            self.add(NAME, node, marked + "=")

    def mark(self, node: Node, place: _Place, name: str) -> str:
        """`local:` when the name's root is bound here, `key:` when it is being defined."""
        if not self.marks or name.startswith("."):
            return name
        if _root(node).type in ("identifier", "shorthand_property_identifier", "shorthand_property_identifier_pattern") \
                and self.active.get(name.split(".")[0], 0) > 0:
            return "local:" + name
        return "key:" + name if _is_key(place) else name

    def unparsed(self, node: Node) -> None:
        """Every word of the bytes an ERROR node holds outside its children: recovery skipped
        them, and a word the grammar could not place may still be a name V8 reads."""
        at = node.start_byte
        for child in node.children + [None]:
            end = child.start_byte if child is not None else node.end_byte
            self.words(node, self.source.data[at:end].decode("utf-8", "surrogateescape"))
            at = child.end_byte if child is not None else at

    def words(self, node: Node, text: str) -> None:
        for word in _WORD.findall(text):
            if not word[0].isdigit():
                self.add(NAME, node, _decoded(word))

    # strings

    def strings(self, node: Node, place: _Place) -> None:
        pieces = _pieces(node)
        for piece in pieces:
            if piece is not None:
                self.add(STRING, node, piece)
        if node.type == "template_string" and not _in_sum(place):
            self.runs(node, pieces)

    def folded(self, node: Node, place: _Place) -> None:
        if node.child_by_field_name("operator").type == "+" and not _in_sum(place):
            self.runs(node, _pieces(node))

    def runs(self, node: Node, pieces: list[str | None]) -> None:
        """Each run of two or more literals the `+`s (or a template) join, as one string."""
        run: list[str] = []
        for piece in pieces + [None]:
            if piece is not None:
                run.append(piece)
                continue
            if len(run) > 1:
                self.add(STRING, node, "".join(run))
            run = []

    # imports

    def imports(self, node: Node, place: _Place) -> None:
        kind = node.type
        if kind in ("import_statement", "export_statement"):
            module = node.child_by_field_name("source")
            if module is not None:
                self.add(IMPORT, node, literal(module) or "?")
        elif kind in ("call_expression", "new_expression") and _callee_is(node, ("import", "require")):
            self.add(IMPORT, node, _module_argument(node))
        elif kind in _NAMES and kind != "meta_property" and self.text(node) == "require" \
                and not place.holds("member_expression", "property") and not place.holds("call_expression", "function") \
                and not place.holds("new_expression", "constructor"):
            # `require` passed around, or reached through (`require.call(null, m)`,
            # `require.main.require(m)`: red team 10): any module
            self.add(IMPORT, node, "?")

    def loose_imports(self) -> None:
        """In an erroneous tree, imports read from the tokens as written, whatever node (or
        skipped bytes) recovery put them in: `require|import ( "m"` and `from|import "m"`."""
        tokens = list(_tokens(self.source.root))
        for at, token in enumerate(tokens[:-1]):
            word = self.text(token) if token.type in _NAMES or token.type in ("import", "from") else ""
            module = tokens[at + 2] if tokens[at + 1].type == "(" and at + 2 < len(tokens) else tokens[at + 1]
            between = self.source.data[token.end_byte:module.start_byte].replace(b"(", b"", 1).strip()
            if module.type == "string" and not between and (word in ("require", "import", "from")):
                self.add(IMPORT, token, literal(module) or "?")

    def add(self, kind: str, node: Node, text: str) -> None:
        self.facts.append(Fact(kind, text, node.start_point[0] + 1))


def _tokens(root: Node) -> Iterator[Node]:
    """The leaves in source order, a string literal as one, comments and the empty tokens
    recovery inserts (MISSING) left out."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("string", "template_string") or not node.child_count:
            if node.type != "comment" and node.end_byte > node.start_byte:
                yield node
        else:
            stack.extend(reversed(node.children))


def _callee_is(call: Node, names: tuple[str, ...]) -> bool:
    """Whether a call (`f(…)`, `new f(…)`) calls one of `names`."""
    function = call.child_by_field_name("function" if call.type == "call_expression" else "constructor")
    return function is not None and function.type in ("import", "identifier") and _decoded(function.text.decode("utf-8", "surrogateescape")) in names


def _module_argument(call: Node) -> str:
    listed = call.child_by_field_name("arguments")
    arguments = [child for child in listed.named_children if child.type != "comment"] if listed is not None else []
    module = literal(arguments[0]) if len(arguments) == 1 else None
    return "?" if module is None else module


# --- literals -------------------------------------------------------------------------------

def literal(node: Node) -> str | None:
    """The value of a string literal or a template without substitutions; None otherwise."""
    if node.type == "string" or (node.type == "template_string"
                                 and not any(c.type == "template_substitution" for c in node.children)):
        return "".join(_fragment(child) for child in node.named_children)
    return None


def _fragment(node: Node) -> str:
    text = node.text.decode("utf-8", "surrogateescape")
    return _unescaped(text) if node.type == "escape_sequence" else text if node.type == "string_fragment" else ""


def _pieces(node: Node) -> list[str | None]:
    """The literal pieces an expression joins, None where a non-literal breaks them: a string
    is one piece, a template its chunks (and the literals of its `${…}`), a `+` its operands'."""
    if node.type == "string":
        return [literal(node)]
    if node.type == "template_string":
        return _template_pieces(node)
    if node.type == "binary_expression" and node.child_by_field_name("operator").type == "+":
        return _sum_pieces(node)
    return [None]


def _sum_pieces(node: Node) -> list[str | None]:
    """A `+` chain's pieces, its left spine walked without recursion."""
    rights: list[Node] = []
    while node.type == "binary_expression" and node.child_by_field_name("operator").type == "+":
        rights.append(node.child_by_field_name("right"))
        node = node.child_by_field_name("left")
    pieces = _pieces(node) if node.type != "binary_expression" else [None]
    for right in reversed(rights):
        pieces += _pieces(right) if right.type != "binary_expression" else [None]
    return pieces


def _template_pieces(node: Node) -> list[str | None]:
    pieces: list[str | None] = []
    chunk = ""
    for child in node.named_children:
        if child.type == "template_substitution":
            inner = [c for c in child.named_children if c.type != "comment"]
            pieces += [chunk] + ([literal(inner[0])] if len(inner) == 1 else [None])
            chunk = ""
        else:
            chunk += _fragment(child)
    return pieces + [chunk]


_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def _unescaped(escape: str) -> str:
    """One escape sequence of a JavaScript string as the character it stands for."""
    body = escape[1:]
    if body[:2] == "u{":
        return _char(int(body[2:-1], 16)) if _hex(body[2:-1]) else body
    if body[:1] in "xu" and _hex(body[1:]):
        return chr(int(body[1:], 16))
    if body and set(body) <= set("01234567"):
        return chr(int(body, 8))  # a legacy octal escape
    if body[:1] in "\r\n\u2028\u2029":
        return ""  # a line continuation
    return _SIMPLE.get(body, body)


def _hex(digits: str) -> bool:
    return bool(digits) and all(c in "0123456789abcdefABCDEF" for c in digits)
