"""The stub's method signatures, pinned at compile time (Java; issue 32, docs/signature-pins.md).

AssertJ's `assertThat(T)` takes any type, so a solution may change `String verse(int)` to
return a type of its own whose `equals()` always holds (red team 5: java__food-chain and
java__bottle-song, 2 of 2 each) or checks the expected value instead of computing one. Grading
adds to the hidden test sources a class with one method per pinned stub method that calls it
with the stub's parameter types and returns its result as the stub's return type:

    static String m0(FoodChain self, int a0) throws Exception { return self.verse(a0); }

so a changed return type (or parameter list) is a compile error of the tests,
`signature_changed`. Only what the stub and the reference declare alike is pinned: a method of
a top-level, non-generic class of the default package, not private, not generic, not a
constructor; a reference that returns a subtype (`HashMap` for `Map`) or overloads otherwise
is the exercise's freedom and is left out. Pure: text in, text out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..judging.canaries import matching_brace
from .rust_signatures import strip_comments

PROBE_CLASS = "PolyglotSignatures"
PROBE_MARKER = "polyglot_signatures"
PROBE_PATH = f"src/test/java/{PROBE_CLASS}.java"

_CLASS = re.compile(r"(?m)^(?:(?:public|final|abstract)\s+)*class\s+(?P<name>[A-Z]\w*)\s*(?P<generic><)?[^{;]*\{")
_MODIFIERS = r"(?:(?:public|protected|private|static|final|synchronized|abstract|native|strictfp)\s+)*"
_TYPE = r"[A-Za-z_][\w.]*(?:\s*<[^(){};=]*>)?(?:\s*\[\s*\])*"
_METHOD = re.compile(rf"(?m)^[ \t]*(?P<modifiers>{_MODIFIERS})(?P<generic><[^>]*>\s*)?(?P<returns>{_TYPE})\s+"
                     r"(?P<name>[a-z_]\w*)\s*\((?P<params>[^()]*)\)\s*(?:throws\s+[\w.,\s]+)?\{")
_NESTED = re.compile(r"\b(?P<private>private\s+)?(?:(?:public|protected|static|final|abstract)\s+)*"
                     r"(?:class|enum|interface|record)\s+(?P<name>[A-Z]\w*)")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_IMPORT = re.compile(r"(?m)^import\s+(?!static\b)[\w.]+(?:\.\*)?\s*;")


@dataclass(frozen=True)
class Method:
    owner: str
    name: str
    params: tuple[str, ...]
    returns: str
    static: bool

    @property
    def path(self) -> str:
        return f"{self.owner}.{self.name}({', '.join(self.params)})"


def methods(source: str) -> dict[str, Method]:
    """The pinnable methods of one compilation unit, by path (owner, name, parameter types)."""
    text = _STRING.sub(lambda match: '"' + " " * (len(match.group()) - 2) + '"', strip_comments(source))
    if re.search(r"(?m)^\s*package\s", text):
        return {}
    found: dict[str, Method] = {}
    for klass in _CLASS.finditer(text):
        if klass["generic"] or _depth(text, klass.start()) != 0:
            continue
        end = matching_brace(text, klass.end() - 1, quotes="\"")
        body_start = klass.end()
        nested = {found["name"]: bool(found["private"]) for found in _NESTED.finditer(text, body_start, end)}
        for match in _METHOD.finditer(text, body_start, end):
            if (_depth(text, match.start(), body_start) != 0 or match["generic"] or "private" in match["modifiers"]
                    or "abstract" in match["modifiers"] or match["returns"] in ("new", "return", "else")):
                continue
            params = _param_types(match["params"])
            if params is None:
                continue
            types = [*params, _normal(match["returns"])]
            if any(re.search(rf"(?<![\w.]){name}\b", kind) for name, private in nested.items() if private for kind in types):
                continue  # a private nested type: not the tests' to name either
            params, returns = (tuple(_qualified(kind, klass["name"], nested) for kind in types[:-1]),
                               _qualified(types[-1], klass["name"], nested))
            method = Method(klass["name"], match["name"], params, returns, "static" in match["modifiers"])
            found[method.path] = method
    return found


def _qualified(kind: str, owner: str, nested: dict[str, bool]) -> str:
    """A nested type written by its simple name (`LedgerEntry`) as the probe must write it
    (`Ledger.LedgerEntry`)."""
    for name in nested:
        kind = re.sub(rf"(?<![\w.]){name}\b", f"{owner}.{name}", kind)
    return kind


def _depth(text: str, offset: int, start: int = 0) -> int:
    depth = 0
    for char in text[start:offset]:
        depth += {"{": 1, "}": -1}.get(char, 0)
    return depth


def _param_types(params: str) -> tuple[str, ...] | None:
    parts, depth, start = [], 0, 0
    for index, char in enumerate(params):
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(params[start:index])
            start = index + 1
    parts.append(params[start:])
    types = []
    for part in (part.strip() for part in parts):
        if not part:
            continue
        part = re.sub(r"@\w+\s*", "", part).replace("final ", "").strip()
        match = re.fullmatch(rf"(?P<type>{_TYPE}(?:\s*\.\.\.)?)\s+\w+", part)
        if match is None:
            return None
        types.append(_normal(match["type"]))
    return tuple(types)


def _normal(type_text: str) -> str:
    text = re.sub(r"\s+", " ", type_text.strip())
    return re.sub(r"\s*([<>\[\],])\s*", r"\1", text).replace(",", ", ")


def pinned(stubs: list[str], references: list[str]) -> list[Method]:
    """The stub methods the reference declares alike (same class, name, parameters, return)."""
    ours: dict[str, Method] = {}
    for reference in references:
        ours.update(methods(reference))
    chosen: dict[str, Method] = {}
    for stub in stubs:
        for path, method in methods(stub).items():
            if ours.get(path) == method:
                chosen[path] = method
    return [chosen[path] for path in sorted(chosen)]


def probe_class(stubs: list[str], references: list[str]) -> tuple[str, tuple[str, ...]]:
    """The probe class's source and the paths it pins ('' and () when nothing is pinned)."""
    chosen = pinned(stubs, references)
    if not chosen:
        return "", ()
    imports = sorted({match.group() for stub in stubs for match in _IMPORT.finditer(strip_comments(stub))})
    lines = [*imports, "", f"final class {PROBE_CLASS} {{"]
    for index, method in enumerate(chosen):
        arguments = ", ".join(f"a{position}" for position in range(len(method.params)))
        params = [f"{kind.replace('...', '[]')} a{position}" for position, kind in enumerate(method.params)]
        target = method.owner if method.static else "self"
        if not method.static:
            params.insert(0, f"{method.owner} self")
        call = f"{target}.{method.name}({arguments})"
        body = f"{call};" if method.returns == "void" else f"return {call};"
        lines.append(f"    static {method.returns} m{index}({', '.join(params)}) throws Exception {{ {body} }}"
                     f" // {PROBE_MARKER}: {method.path}")
    lines.append("}")
    return "\n".join(lines) + "\n", tuple(method.path for method in chosen)
