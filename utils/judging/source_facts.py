"""Source files as facts for the source policy (utils/judging/source_policy.py). Pure, host-only.

Python is read through its own syntax tree (`ast`): imports and their aliases resolved
(`import sys as s; s._getframe` is `sys._getframe`), `getattr(x, "lit")` read as `x.lit`,
a computed attribute of a module or of the builtins marked `<module>.?`, an assignment to a
module's attribute marked `<name>=`, docstrings left out.

C++ goes through a tokenizer (`tokens`) that drops comments and reads every string form as a
string (escapes decoded; raw and char literals); Go, Rust and Java are lexed by tree-sitter
(utils/judging/tree_facts.py) into the same tokens, and JavaScript is read through tree-sitter
(utils/languages/javascript_facts.py). Readers turn tokens into facts: qualified names as
written (`chains`: `std::process::exit`, `os.Exit`, `a["b"]` read as `a.b`, a computed
`a[expr]` as `a[]`, a call marked `()`), strings (`string_facts`: adjacent literals joined by
`+` folded), and each language's imports and directives (the Go, Rust and Java readers live in
their language modules; here C++'s preprocessor lines and GNU attributes).
"""

from __future__ import annotations

import ast
import io
import re
import threading
import tokenize
from dataclasses import dataclass
from typing import Iterator

from .source_policy import DIRECTIVE, IMPORT, NAME, STRING, Fact

# --- Python -------------------------------------------------------------------------------

_BUILTINS_ROOTS = {"__builtins__", "builtins"}
_REFLECTIVE_CALLS = {"getattr", "setattr", "delattr", "hasattr", "vars"}


_AST_LOCK = threading.Lock()


def parse_python(text: str, mode: str = "exec") -> ast.AST:
    """`ast.parse`, one thread at a time: CPython 3.11 builds the tree's objects with a
    per-interpreter recursion counter that threads parsing at once corrupt (gh-106905:
    `SystemError: AST constructor recursion depth mismatch`, a Ray worker's grading of
    python__book-store in the CI run of e9ed408)."""
    with _AST_LOCK:
        return ast.parse(text, mode=mode)


def python_facts(text: str) -> tuple[Fact, ...]:
    """The facts of a Python file: from its syntax tree, or from its tokens when the host's
    Python cannot parse it (a newer grammar than the host's must not hide a file)."""
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _python_token_facts(text)
    try:
        reader = _PythonReader(_python_aliases(tree))
        reader.visit(tree)
    except RecursionError:  # a tree deeper than the reader recurses (`1+1+…+1`): its tokens
        return _python_token_facts(text)
    return tuple(reader.facts)


def _python_aliases(tree: ast.AST) -> dict[str, str]:
    """Names bound to modules or their members by imports (and plain `x = module` copies),
    whatever the scope: a name is resolved the same everywhere in its file."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for _ in range(3):  # copies of copies
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                chain = _chain(node.value, aliases)
                if chain and _imported(chain, aliases):
                    for target in targets:
                        if isinstance(target, ast.Name):
                            aliases.setdefault(target.id, chain)
    return aliases


def _imported(chain: str, aliases: dict[str, str]) -> bool:
    root = chain.split(".")[0]
    return root in _BUILTINS_ROOTS or root in _roots(aliases)


_ROOTS_CACHE: dict[int, tuple[int, frozenset[str]]] = {}


def _roots(aliases: dict[str, str]) -> frozenset[str]:
    """The modules the aliases stand for (first segments), computed once per size of the map."""
    cached = _ROOTS_CACHE.get(id(aliases))
    if cached is None or cached[0] != len(aliases):
        _ROOTS_CACHE.clear()
        cached = (len(aliases), frozenset(value.split(".")[0] for value in aliases.values()))
        _ROOTS_CACHE[id(aliases)] = cached
    return cached[1]


def _chain(node: ast.AST, aliases: dict[str, str]) -> str | None:
    if isinstance(node, ast.Name):
        return aliases.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        base = _chain(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2:
        name = _constant_string(node.args[1])
        base = _chain(node.args[0], aliases)
        return f"{base}.{name}" if base and name is not None else None
    if isinstance(node, ast.Subscript):
        base = _chain(node.value, aliases)
        key = _constant_string(node.slice)
        if base and key is not None and base.split(".")[-1] in ("__dict__", "modules", "__builtins__"):
            return f"{base}.{key}"
    return None


def _constant_string(node: ast.AST) -> str | None:
    """The value of a string literal, or of literals joined by `+`; None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _constant_string(node.left), _constant_string(node.right)
        return left + right if left is not None and right is not None else None
    return None


def _python_token_facts(text: str) -> tuple[Fact, ...]:
    """Dotted names, imports and string literals from Python's tokenizer (no aliases)."""
    facts: list[Fact] = []
    chain: list[str] = []
    chain_line, chain_after, previous = 0, "", ""

    def flush() -> None:
        if chain:
            facts.append(Fact(NAME, ".".join(chain), chain_line))
            if chain_after in ("import", "from", ","):
                facts.append(Fact(IMPORT, ".".join(chain), chain_line))

    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME and chain and previous == ".":
                chain.append(token.string)
            elif token.type == tokenize.OP and token.string == "." and chain:
                pass
            else:
                flush()
                chain = []
                if token.type == tokenize.NAME and token.string not in ("import", "from"):
                    chain, chain_line, chain_after = [token.string], token.start[0], previous
                elif token.type == tokenize.STRING:
                    facts.append(Fact(STRING, _python_literal(token.string), token.start[0]))
            previous = token.string
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    flush()
    return tuple(facts)


def _python_literal(source: str) -> str:
    try:
        value = ast.literal_eval(source)
        return value if isinstance(value, str) else source
    except (ValueError, SyntaxError):
        return source


def _receiver(node) -> str | None:
    """The first parameter of a method when it is `self`, or `cls` of a @classmethod, and
    never rebound. A plain function's first parameter is whatever its caller passes, whatever
    its name (`Helper.get(any_object, name)`: an independent red team, 2026-11-28, read
    `sys.modules` and patched unittest that way on python__paasio); a classmethod's is its class."""
    params = node.args.posonlyargs + node.args.args
    if not params or params[0].arg not in ("self", "cls"):
        return None
    name = params[0].arg
    if name == "cls" and not any(isinstance(d, ast.Name) and d.id == "classmethod" for d in node.decorator_list):
        return None
    rebound = any(isinstance(child, ast.Name) and child.id == name and isinstance(child.ctx, (ast.Store, ast.Del))
                  for child in ast.walk(node))
    return None if rebound else name


def _own_attribute(receiver: str | None, base: str | None, name: ast.AST) -> bool:
    """Whether `getattr(base, name)` (or set/del) names an attribute of the method's own: its
    class's (`cls` of a classmethod), or one under a literal prefix (`getattr(self,
    'turn_' + command)`): `self` can be any object an unbound call passes, and a prefix that
    does not start with `_` keeps every dunder and module attribute out of reach."""
    if receiver is None or base != receiver:
        return False
    if receiver == "cls":
        return True
    prefix = _literal_prefix(name)
    return bool(prefix) and not prefix.startswith("_")


def _literal_prefix(node: ast.AST) -> str:
    """The literal text a string expression starts with (`'turn_' + x`, `f'turn_{x}'`)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal_prefix(node.left)
    if isinstance(node, ast.JoinedStr) and node.values:
        return _literal_prefix(node.values[0])
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


class _PythonReader(ast.NodeVisitor):
    def __init__(self, aliases: dict[str, str]) -> None:
        self.aliases = aliases
        self.facts: list[Fact] = []
        self.docstrings: set[int] = set()
        self.receivers: list[str | None] = []  # each enclosing function's untouched self/cls

    def add(self, kind: str, text: str, node: ast.AST) -> None:
        self.facts.append(Fact(kind, text, getattr(node, "lineno", 0)))

    def visit_Module(self, node: ast.Module) -> None:
        self._note_docstring(node)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._note_docstring(node)
        self.generic_visit(node)

    def visit_FunctionDef(self, node) -> None:
        self._note_docstring(node)
        self.receivers.append(_receiver(node))
        self.generic_visit(node)
        self.receivers.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def _note_docstring(self, node) -> None:
        body = getattr(node, "body", [])
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            self.docstrings.add(id(body[0].value))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.add(IMPORT, alias.name, node)
            self.add(NAME, alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = "." * node.level + (node.module or "")
        self.add(IMPORT, module, node)
        for alias in node.names:
            self.add(NAME, f"{module}.{alias.name}", node)

    def visit_Name(self, node: ast.Name) -> None:
        self.add(NAME, self.aliases.get(node.id, node.id), node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain = _chain(node, self.aliases)
        self.add(NAME, chain if chain else f"?.{node.attr}", node)
        if isinstance(node.ctx, (ast.Store, ast.Del)) and chain and _imported(chain, self.aliases):
            self.add(NAME, chain + "=", node)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        chain = _chain(node.value, self.aliases)
        if isinstance(node.ctx, (ast.Store, ast.Del)) and chain and _imported(chain, self.aliases):
            self.add(NAME, chain + "[]=", node)
        resolved = _chain(node, self.aliases)
        if resolved:
            self.add(NAME, resolved, node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in _REFLECTIVE_CALLS and node.args:
            base = _chain(node.args[0], self.aliases)
            name = _constant_string(node.args[1]) if len(node.args) > 1 else None
            suffix = "=" if node.func.id in ("setattr", "delattr") else ""
            if base and _imported(base, self.aliases):
                self.add(NAME, f"{base}.{'?' if name is None else name}{suffix}", node)
            elif name is None and node.func.id in ("getattr", "setattr", "delattr") and len(node.args) > 1 \
                    and not _own_attribute(self.receivers[-1] if self.receivers else None, base, node.args[1]):
                # An attribute named at run time (`getattr(f, built)` reaches `__globals__`);
                # a method's own attribute is its class's business (`_own_attribute`).
                self.add(NAME, f"{base or '?'}.?{suffix}", node)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and id(node) not in self.docstrings:
            self.add(STRING, node.value, node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        folded = _constant_string(node)
        if folded is not None:
            self.add(STRING, folded, node)
        self.generic_visit(node)


# --- the tokenizer of the brace languages ---------------------------------------------------

ID, STR, NUM, PUNCT = "id", "str", "num", "punct"


@dataclass(frozen=True)
class Token:
    kind: str
    text: str  # an identifier or punctuation as written; a string's decoded value
    line: int


@dataclass(kw_only=True, frozen=True)
class Dialect:
    name: str
    raw_strings: str = ""             # "cpp" (R"d(…)d")
    digit_separator: str = ""         # C++'s 1'000'000
    line_directives: bool = False     # C/C++ preprocessor lines (`#` or `%:` first on a line), digraphs


_PUNCT3 = ("...", "<<=", ">>=", "===", "!==", "**=", "&&=", "||=", "??=", "->*", ">>>", "<=>")
_PUNCT2 = ("::", "->", "=>", "==", "!=", "<=", ">=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=",
           "|=", "^=", "<<", ">>", "?.", "??", "##", ":=", "..", "**")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "b": "\b", "f": "\f", "v": "\v", "a": "\a", "e": "\x1b"}


def decode_escapes(body: str) -> str:
    """A string literal's body with its escapes decoded (\\x, \\u, \\u{…}, \\U, octal, simple)."""
    def one(match: re.Match[str]) -> str:
        escape = match.group(1)
        try:
            if escape[0] == "x":
                return chr(int(escape[1:], 16))
            if escape[0] == "u" and escape[1:2] == "{":
                return chr(int(escape[2:-1], 16))
            if escape[0] in "uU":
                return chr(int(escape.lstrip("uU"), 16))
            if escape[0] in "01234567" and len(escape) > 1:
                return chr(int(escape, 8))
        except (ValueError, OverflowError):
            return escape
        if escape[0] == "\n":
            return ""
        return _SIMPLE_ESCAPES.get(escape, escape)
    return re.sub(r"\\(x[0-9A-Fa-f]{1,2}|u\{[0-9A-Fa-f]{1,6}\}|u+[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[0-7]{1,3}|.|\n)",
                  one, body, flags=re.S)


class _Scanner:
    def __init__(self, text: str, dialect: Dialect) -> None:
        self.text, self.dialect = text, dialect
        self.pos, self.line = 0, 1
        self.out: list[Token] = []
        self.comments: list[Token] = []  # line comments, kept for directive readers (Go's //go:)
        # No token yet since the last newline outside a comment: a block comment spanning lines
        # joins them (`x /*\n*/ #define` is no directive), as the compiler reads it.
        self.fresh_line = True

    def emit(self, kind: str, text: str, line: int) -> None:
        self.out.append(Token(kind, text, line))
        self.fresh_line = False

    def advance_to(self, end: int) -> str:
        chunk = self.text[self.pos:end]
        self.line += chunk.count("\n")
        self.pos = end
        return chunk

    def run(self) -> list[Token]:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t\r\f\v\n":
                self.fresh_line = self.fresh_line or char == "\n"
                self.advance_to(self.pos + 1)
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                end = len(text) if end < 0 else end
                self.comments.append(Token("comment", text[self.pos:end], self.line))
                self.advance_to(end)
            elif text.startswith("/*", self.pos):
                self.block_comment()
            elif self.dialect.line_directives and self.directive_start():
                self.directive_line()
            elif char.isdigit() or (char == "." and text[self.pos + 1:self.pos + 2].isdigit()):
                self.number()
            elif self.raw_string_start():
                pass
            elif char.isalpha() or char in "_$" or ord(char) > 127:
                self.identifier()
            elif char == '"':
                self.delimited('"', escapes=True)
            elif char == "'":
                self.delimited("'", escapes=True)
            else:
                self.punct()
        return self.out

    def at_line_start(self) -> bool:
        start = self.text.rfind("\n", 0, self.pos) + 1
        return not self.text[start:self.pos].strip()

    def directive_start(self) -> bool:
        """`#` or `%:` first on its line once comments are spaces (`/**/ #define` is one)."""
        if not (self.text.startswith("#", self.pos) or self.text.startswith("%:", self.pos)):
            return False
        return self.fresh_line

    def block_comment(self) -> None:
        end = self.text.find("*/", self.pos + 2)
        self.advance_to(len(self.text) if end < 0 else end + 2)

    def directive_line(self) -> None:
        """A preprocessor line (continuations joined, comments as spaces, digraphs spelled as
        their tokens, as the compiler reads it) as one `directive` token, then its tokens."""
        marker = 2 if self.text.startswith("%:", self.pos) else 1
        end = _directive_end(self.text, self.pos)
        body = _directive_text(re.sub(r"\\\r?\n", " ", self.text[self.pos + marker:end]))
        self.emit("directive", body.strip(), self.line)
        self.advance_to(self.pos + marker)  # the rest is tokenized as usual (macro bodies are code)

    def number(self) -> None:
        match = re.compile(r"[0-9A-Za-z_.']*" if self.dialect.digit_separator else r"[0-9A-Za-z_.]*").match(
            self.text, self.pos)
        chunk = match.group(0)
        if ".." in chunk:  # Rust ranges `0..n`
            chunk = chunk[:chunk.index("..")]
        self.emit(NUM, chunk, self.line)
        self.advance_to(self.pos + max(1, len(chunk)))

    def identifier(self) -> None:
        line, parts, index = self.line, [], self.pos
        while index < len(self.text):
            char = self.text[index]
            if char.isalnum() or char in "_$" or ord(char) > 127:
                parts.append(char)
                index += 1
            else:
                break
        self.emit(ID, "".join(parts), line)
        self.advance_to(index)

    def raw_string_start(self) -> bool:
        text, pos = self.text, self.pos
        if self.dialect.raw_strings == "cpp":
            match = re.compile(r"(?:u8|u|U|L)?R\"([^()\\\s]{0,16})\(").match(text, pos)
            if match:
                closing = ")" + match.group(1) + '"'
                end = text.find(closing, match.end())
                end = len(text) if end < 0 else end
                self.emit(STR, text[match.end():end], self.line)
                self.advance_to(end + len(closing))
                return True
            match = re.compile(r"(?:u8|u|U|L)[\"']").match(text, pos)
            if match:
                self.advance_to(match.end() - 1)
                return False
        return False

    def delimited(self, quote: str, escapes: bool) -> None:
        line, index = self.line, self.pos + len(quote)
        while index < len(self.text) and not self.text.startswith(quote, index):
            if escapes and self.text[index] == "\\":
                index += 1
            elif quote in "\"'" and self.text[index] == "\n":
                break  # an unterminated literal ends at its line
            index += 1
        body = self.text[self.pos + len(quote):index]
        self.emit(STR, decode_escapes(body) if escapes else body, line)
        self.advance_to(min(index + len(quote), len(self.text)))


    def punct(self) -> None:
        if self.dialect.line_directives and self.digraph():
            return
        for size, table in ((3, _PUNCT3), (2, _PUNCT2)):
            if self.text[self.pos:self.pos + size] in table:
                self.emit(PUNCT, self.text[self.pos:self.pos + size], self.line)
                self.advance_to(self.pos + size)
                return
        self.emit(PUNCT, self.text[self.pos], self.line)
        self.advance_to(self.pos + 1)


    def digraph(self) -> bool:
        """C++'s alternative tokens read as the ones they stand for (`%:%:` is `##`)."""
        text, pos = self.text, self.pos
        for spelling, meaning in _DIGRAPHS:
            if text.startswith(spelling, pos):
                # `<::` not followed by `:` or `>` is `<` then `::` (C++11 [lex.pptoken]).
                if spelling == "<:" and text.startswith("<::", pos) and text[pos + 3:pos + 4] not in (":", ">"):
                    return False
                self.emit(PUNCT, meaning, self.line)
                self.advance_to(pos + len(spelling))
                return True
        return False


_DIGRAPHS = (("%:%:", "##"), ("%:", "#"), ("<:", "["), (":>", "]"), ("<%", "{"), ("%>", "}"))
# A directive's text: literals kept, comments one space, digraphs their tokens.
_DIRECTIVE_PIECE = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|/\*.*?(?:\*/|$)|//[^\n]*|%:%:|%:|<:|:>|<%|%>',
                              re.S)


def _directive_end(text: str, start: int) -> int:
    """Where the directive starting at `start` ends: its newline, block comments (which may span
    lines: the directive goes on after one) and literals skipped."""
    for match in re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|/\*.*?(?:\*/|\Z)|//[^\n]*|\\\r?\n|\n',
                            re.S).finditer(text, start):
        if match.group(0) == "\n":
            return match.start()
    return len(text)


def _directive_text(body: str) -> str:
    replace = {"%:%:": "##", "%:": "#", "<:": "[", ":>": "]", "<%": "{", "%>": "}"}
    def one(match: re.Match[str]) -> str:
        piece = match.group(0)
        if piece.startswith(("/*", "//")):
            return " "
        return replace.get(piece, piece)
    return _DIRECTIVE_PIECE.sub(one, body)


class TokenList(list):
    """Tokens with their brackets paired once (linear), so that no reader rescans a file
    per bracket: an attacker's deeply nested file must cost what a flat one costs."""

    @property
    def pairs(self) -> dict[int, int]:
        if not hasattr(self, "_pairs"):
            closers = {")": "(", "]": "[", "}": "{"}
            pairs: dict[int, int] = {}
            stacks: dict[str, list[int]] = {"(": [], "[": [], "{": []}
            for index, token in enumerate(self):
                if token.kind != PUNCT:
                    continue
                if token.text in stacks:
                    stacks[token.text].append(index)
                elif token.text in closers and stacks[closers[token.text]]:
                    opener = stacks[closers[token.text]].pop()
                    pairs[opener], pairs[index] = index, opener
            self._pairs = pairs
        return self._pairs


def tokens(text: str, dialect: Dialect) -> tuple[TokenList, list[Token]]:
    """(tokens, line comments) of a source file in `dialect`."""
    scanner = _Scanner(text, dialect)
    return TokenList(scanner.run()), scanner.comments


# --- facts from tokens ----------------------------------------------------------------------

_SEPARATORS = {".", "::", "?.", "->"}


def chains(toks: list[Token], head=lambda text: text) -> Iterator[tuple[str, int, int]]:
    """(qualified name, line, index of its last token) of every name as written: identifiers
    joined by `.`, `::`, `?.`, `->`; `a["b"]` read as `a.b`; a computed subscript ends the
    name as `a[]`; a call adds `()`, a macro `!`. A name that starts after a separator (a
    member of an expression, `f().x`) starts with it. `head` resolves a first identifier
    (Go's import aliases)."""
    index = 0
    while index < len(toks):
        token = toks[index]
        if token.kind != ID or (index and toks[index - 1].kind == PUNCT and toks[index - 1].text in _SEPARATORS
                                and index > 1 and toks[index - 2].kind == ID):
            index += 1
            continue
        leading = toks[index - 1].text if index and toks[index - 1].kind == PUNCT and toks[index - 1].text in _SEPARATORS else ""
        parts = [leading + (head(token.text) if not leading else token.text)]
        end = index
        while True:
            nxt = toks[end + 1] if end + 1 < len(toks) else None
            after = toks[end + 2] if end + 2 < len(toks) else None
            if nxt and nxt.kind == PUNCT and nxt.text in _SEPARATORS and after and after.kind == ID:
                parts.append(nxt.text + after.text)
                end += 2
            elif (nxt and nxt.text == "[" and after and after.kind == STR and end + 3 < len(toks)
                  and toks[end + 3].text == "]"):
                parts.append("." + after.text)
                end += 3
            elif nxt and nxt.text == "[" and nxt.kind == PUNCT:
                yield "".join(parts), token.line, end  # `os.Args[0]` uses `os.Args`
                parts.append("[]")
                break
            else:
                break
        name = "".join(parts)
        follow = toks[end + 1] if end + 1 < len(toks) else None
        yield name, token.line, end
        if follow is not None and follow.kind == PUNCT and follow.text == "(" and not name.endswith("[]"):
            yield name + "()", token.line, end
        if follow is not None and follow.kind == PUNCT and follow.text == "!":
            yield name + "!", token.line, end
        index = end + 1


def string_facts(toks: list[Token], joiners: tuple[str, ...] = ("+",)) -> Iterator[Fact]:
    """Every string literal, and each run of literals joined by `joiners` (or adjacent, as
    C++ concatenates them) folded into one."""
    index = 0
    while index < len(toks):
        if toks[index].kind != STR:
            index += 1
            continue
        line, values, end = toks[index].line, [toks[index].text], index
        yield Fact(STRING, toks[index].text, line)
        while True:
            if end + 1 < len(toks) and toks[end + 1].kind == STR:
                end += 1
            elif (end + 2 < len(toks) and toks[end + 1].kind == PUNCT and toks[end + 1].text in joiners
                  and toks[end + 2].kind == STR):
                end += 2
            else:
                break
            values.append(toks[end].text)
            yield Fact(STRING, toks[end].text, toks[end].line)
        if len(values) > 1:
            yield Fact(STRING, "".join(values), line)
        index = end + 1


def name_facts(toks: list[Token], head=lambda text: text) -> list[Fact]:
    return [Fact(NAME, name, line) for name, line, _ in chains(toks, head)]


# --- shared by the readers ---------------------------------------------------------------

def matching(toks: list[Token], open_index: int) -> int:
    """The index of the bracket closing toks[open_index] (the last token when none does)."""
    return toks.pairs.get(open_index, len(toks) - 1)


# --- C++ ------------------------------------------------------------------------------------

# Keywords after which a name is used, not declared (`return exit(1)`).
_CPP_EXPRESSION_KEYWORDS = {"return", "case", "throw", "new", "delete", "co_return", "co_yield", "co_await", "else",
                            "do", "sizeof", "alignof", "decltype", "typeid", "noexcept", "goto", "using", "operator"}
CPP = Dialect(name="cpp", raw_strings="cpp", digit_separator="'", line_directives=True)


def cpp_facts(text: str) -> tuple[Fact, ...]:
    """C++ as the preprocessor sees it: `#include` targets are imports, `#define`d names,
    `##` pastes and `#pragma`s are directives, macro bodies are read as code; GNU
    `__attribute__((…))` and `[[…]]` contents are directives."""
    # Line splices go first, as in translation phase 2 (`sys\<newline>tem` is `system`).
    toks, _ = tokens(re.sub(r"\\\r?\n", "", text), CPP)
    facts: list[Fact] = []
    code = TokenList()
    index = 0
    while index < len(toks):
        token = toks[index]
        index += 1
        if token.kind != "directive":
            code.append(token)
            continue
        facts += _cpp_directive(token)
        if index + 1 < len(toks) and toks[index].text == "define" and toks[index + 1].kind == ID:
            # A macro body is code used wherever the macro is: its first name is no declaration.
            index += 2
            if index < len(toks) and toks[index].text == "(" and toks[index].line == token.line:
                index = matching(toks, index) + 1
            code.append(Token(PUNCT, ";", token.line))
    aliases = _cpp_namespace_aliases(code)
    for name, line, end in chains(code, lambda name: aliases.get(name, name)):
        start = end - 2 * (name.count("::") + name.count(".") + name.count("->"))
        before = code[start - 1] if start > 0 else None
        declared = (before is not None and before.kind == ID and before.text not in _CPP_EXPRESSION_KEYWORDS
                    and name[:1].isalpha())
        facts.append(Fact(NAME, ("decl:" if declared else "") + name, line))  # `void open();` declares
    facts += list(string_facts(code, joiners=()))
    facts += _cpp_attributes(code)
    facts += [Fact(DIRECTIVE, f'extern "{code[index + 1].text}"', token.line) for index, token in enumerate(code[:-1])
              if token.kind == ID and token.text == "extern" and code[index + 1].kind == STR]
    return tuple(facts)


def _cpp_namespace_aliases(toks: list[Token]) -> dict[str, str]:
    """`namespace s = ::std;` read as `s` standing for `std` (so `s::system` is `std::system`)."""
    aliases = {}
    for index, token in enumerate(toks[:-3]):
        if token.text == "namespace" and toks[index + 1].kind == ID and toks[index + 2].text == "=":
            end = index + 3
            while end < len(toks) and toks[end].text != ";":
                end += 1
            aliases[toks[index + 1].text] = "".join(t.text for t in toks[index + 3:end]).lstrip(":")
    return aliases


def _cpp_directive(token: Token) -> list[Fact]:
    body = token.text
    facts = [Fact(DIRECTIVE, body.split(None, 1)[0] if body.split() else "#", token.line)]
    include = re.match(r"\s*(include|include_next|import|embed)\s*[<\"]([^>\"]*)[>\"]", body)
    if include:
        facts.append(Fact(IMPORT, include.group(2), token.line))
    elif re.match(r"\s*(include|include_next|import|embed)\b", body):
        facts.append(Fact(IMPORT, "?", token.line))  # a computed include
    if re.match(r"\s*define\b", body):
        name = re.match(r"\s*define\s+(\w+)", body)
        facts.append(Fact(DIRECTIVE, f"define {name.group(1) if name else '?'}", token.line))
        if "##" in body:
            facts.append(Fact(DIRECTIVE, "##", token.line))
    pragma = re.match(r"\s*pragma\s+(.*)", body)
    if pragma:
        facts.append(Fact(DIRECTIVE, "pragma " + pragma.group(1).strip(), token.line))
    return facts


def _cpp_attributes(toks: list[Token]) -> list[Fact]:
    facts = []
    for index, token in enumerate(toks):
        if token.kind == ID and token.text in ("__attribute__", "__declspec") and index + 1 < len(toks) and toks[index + 1].text == "(":
            close = matching(toks, index + 1)
            facts += [Fact(DIRECTIVE, t.text.strip("_"), t.line) for t in toks[index + 2:close] if t.kind == ID]
        elif token.text == "[" and index + 1 < len(toks) and toks[index + 1].text == "[" and (not index or toks[index - 1].kind != ID):
            close = matching(toks, index)
            facts += [Fact(DIRECTIVE, t.text.strip("_"), t.line) for t in toks[index + 2:close] if t.kind == ID]
    return facts
