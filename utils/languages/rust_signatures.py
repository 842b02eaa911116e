"""The stub's signatures, pinned at compile time (issue 32: the solution chooses the compared type).

A Rust test binds the solution's result by inference (`let answer = solve(..)`,
`assert_eq!(f.stack(), [1, 2])`), so a solution can return a type of its own whose `PartialEq`
always holds, or checks the expected value instead of computing one (rust__alphametics: a
"solution" whose result equals any assignment that satisfies the puzzle, red team 5), and
nothing the tests compare can tell. The stub fixes the types (`pub fn solve(input: &str) ->
Option<HashMap<char, u8>>`): grading appends to a hidden test file a module that coerces each
of the solution's functions to the stub's function-pointer type

    let _: fn(&str) -> Option<HashMap<char, u8>> = alphametics::solve;

so a changed signature is a compile error of the tests (`signature_changed`), whatever the
solution's types do at run time. Only what the stub and the reference declare alike is
pinned (the reference is a correct solution: a signature it changes is the exercise's
freedom): a free `pub fn` or a `pub fn` of an inherent `impl Type` (no generics, no `impl
Trait`, no `unsafe`/`extern`/`async`), with `Self` and the receiver written as the type.
Pure: text in, text out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..judging.canaries import matching_brace

# The module's name: a compile error inside it is the verdict's evidence (grading.py).
PROBE_MODULE = "polyglot_signatures"

_FN = re.compile(r"\bpub(?:\([^)]*\))?\s+(?P<const>const\s+)?fn\s+(?P<name>\w+)\s*(?P<generic><)?")
_IMPL = re.compile(r"(?m)^impl\s+(?P<type>[A-Za-z_]\w*)\s*\{")
_USE = re.compile(r"(?m)^(?:pub\s+)?use\s+[^;{}]*(?:\{[^}]*\})?[^;]*;")
_UNSUPPORTED = re.compile(r"\bimpl\b|\bwhere\b|\bunsafe\b|\bextern\b|\basync\b|'_|\bdyn\b")


@dataclass(frozen=True)
class Signature:
    path: str                  # `solve`, `Forth::stack`
    params: tuple[str, ...]    # types, the receiver first (`&Forth`)
    returns: str               # `()` when the stub writes none
    lifetimes: str = ""        # `'a` of `pub fn winning_hands<'a>(..)`: the pointer is `for<'a> fn`

    def pointer_type(self) -> str:
        bound = f"for<{self.lifetimes}> " if self.lifetimes else ""
        return f"{bound}fn({', '.join(self.params)}) -> {self.returns}"


_CHAR = re.compile(r"'(?:[^'\\\n]|\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.))'")


def strip_comments(source: str) -> str:
    """The source with its comments and character literals blanked (same offsets), strings
    kept (a `'{'` must not count as a brace; a lifetime `'a` is no literal)."""
    out = list(source)
    index = 0
    while index < len(source):
        char = _CHAR.match(source, index) if source[index] == "'" else None
        if char:
            out[index:char.end()] = " " * (char.end() - index)
            index = char.end()
        elif source.startswith("//", index):
            end = source.find("\n", index)
            end = len(source) if end < 0 else end
            out[index:end] = " " * (end - index)
            index = end
        elif source.startswith("/*", index):
            end = source.find("*/", index + 2)
            end = len(source) if end < 0 else end + 2
            out[index:end] = [c if c == "\n" else " " for c in source[index:end]]
            index = end
        elif source[index] == '"':
            index += 1
            while index < len(source) and source[index] != '"':
                index += 2 if source[index] == "\\" else 1
            index += 1
        else:
            index += 1
    return "".join(out)


def signatures(source: str) -> dict[str, Signature]:
    """The pinnable signatures of a crate root (`src/lib.rs`), by path."""
    text = strip_comments(source)
    found: dict[str, Signature] = {}
    impls = []
    for match in _IMPL.finditer(text):
        end = matching_brace(text, match.end() - 1, quotes="\"")
        impls.append((match.end(), end, match["type"]))
    for match in _FN.finditer(text):
        owner = next((kind for start, end, kind in impls if start <= match.start() < end), None)
        if _depth(text, match.start()) != (1 if owner else 0):
            continue
        after, lifetimes = match.end(), ""
        if match["generic"]:  # lifetimes only (`<'a>`, `<'a, 'b>`): a higher-ranked pointer
            close = text.find(">", after)
            lifetimes = text[after:close].strip()
            if close < 0 or not re.fullmatch(r"'\w+(?:\s*,\s*'\w+)*\s*,?", lifetimes):
                continue
            after, lifetimes = close + 1, _normal(lifetimes.rstrip(","))
        signature = _signature(text, after, match["name"], owner, lifetimes)
        if signature is not None:
            found[signature.path] = signature
    return found


def _depth(text: str, offset: int) -> int:
    """Brace depth at `offset` (strings and comments already blanked or skipped)."""
    depth = 0
    index = 0
    while index < offset:
        char = text[index]
        if char == '"':
            index += 1
            while index < offset and text[index] != '"':
                index += 2 if text[index] == "\\" else 1
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        index += 1
    return depth


def _signature(text: str, after_name: int, name: str, owner: str | None, lifetimes: str = "") -> Signature | None:
    if not text.startswith("(", after_name):
        return None
    close = matching_brace(text.replace("(", "{").replace(")", "}"), after_name, quotes="\"")
    params_text = text[after_name + 1:close - 1]
    body = text.find("{", close)
    semicolon = text.find(";", close)
    head_end = body if body >= 0 and (semicolon < 0 or body < semicolon) else semicolon
    tail = text[close:head_end].strip()
    if _UNSUPPORTED.search(params_text + " " + tail):
        return None
    returns = tail[2:].strip() if tail.startswith("->") else "()" if not tail else None
    if returns is None:
        return None
    params = []
    for index, param in enumerate(_split_top(params_text)):
        receiver = re.fullmatch(r"(&\s*(?:mut\s+)?)?(?:mut\s+)?self", param)
        if receiver:
            if owner is None or index:
                return None
            params.append(re.sub(r"\s+", " ", (receiver.group(1) or "")).replace("& ", "&") + owner)
            continue
        pattern, colon, kind = param.partition(":")
        if not colon or re.search(r"\bself\b", param):
            return None
        params.append(kind.strip())
    if owner:
        params = [re.sub(r"\bSelf\b", owner, param) for param in params]
        returns = re.sub(r"\bSelf\b", owner, returns)
    elif "Self" in returns or any("Self" in param for param in params):
        return None
    return Signature(f"{owner}::{name}" if owner else name, tuple(_normal(p) for p in params), _normal(returns),
                     lifetimes)


def _split_top(text: str) -> list[str]:
    """Comma-separated parts at depth 0 of ()<>[] (no part for a trailing comma)."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "(<[":
            depth += 1
        elif char in ")>]" and not (char == ">" and text[index - 1:index] == "-"):
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


def _normal(type_text: str) -> str:
    """One spelling of a type: whitespace collapsed, none inside brackets or around `&`/`,`."""
    text = re.sub(r"\s+", " ", type_text.strip())
    text = re.sub(r"\s*([<>\[\](),;&])\s*", r"\1", text)
    text = text.replace(",", ", ").replace(";", "; ").replace("&mut", "&mut ").replace("&mut  ", "&mut ")
    return re.sub(r"\bdyn(?=\S)", "dyn ", text)


def pinned(stub: str, reference: str) -> list[Signature]:
    """The stub's signatures the reference declares alike (same path, same types)."""
    ours = signatures(reference)
    return [signature for path, signature in sorted(signatures(stub).items()) if ours.get(path) == signature]


def probe_module(stub: str, reference: str, crate: str) -> tuple[str, tuple[str, ...]]:
    """The module grading appends to a hidden test file, and the paths it pins ('' and () when
    nothing is pinned). It brings the crate's items and the stub's own `use`s into scope, then
    coerces each pinned function to the stub's function-pointer type."""
    chosen = pinned(stub, reference)
    if not chosen:
        return "", ()
    uses = [use for use in _USE.findall(strip_comments(stub))
            if not re.search(r"\b(crate|self|super)\s*::", use)]
    lines = ["#[allow(dead_code, unused_imports, clippy::all)]", f"mod {PROBE_MODULE} {{",
             f"    use {crate}::*;"]
    lines += [f"    {use.strip().removeprefix('pub ').strip()}" for use in uses]
    lines.append("    pub fn pinned() {")
    for signature in chosen:
        # The marker on the line: a compile error here shows it (grading's signature_changed).
        lines.append(f"        let _: {signature.pointer_type()} = {crate}::{signature.path}; // {PROBE_MODULE}: {signature.path}")
    lines += ["    }", "}"]
    return "\n".join(lines) + "\n", tuple(signature.path for signature in chosen)
