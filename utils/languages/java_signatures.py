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
is the exercise's freedom and is left out. Read with tree-sitter (utils/judging/syntax.py).
Pure: text in, text out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..judging.syntax import Source

PROBE_CLASS = "PolyglotSignatures"
PROBE_MARKER = "polyglot_signatures"
PROBE_PATH = f"src/test/java/{PROBE_CLASS}.java"

_NESTED_TYPES = ("class_declaration", "enum_declaration", "interface_declaration", "record_declaration")


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
    """The pinnable methods of one compilation unit, by path (owner, name, parameter types):
    those of its top-level, non-generic classes of the default package, not private, abstract
    or generic (tree-sitter's Java grammar)."""
    tree = Source("java", source)
    if any(item.type == "package_declaration" for item in tree.root.named_children):
        return {}
    found: dict[str, Method] = {}
    for klass in tree.root.named_children:
        if klass.type != "class_declaration" or klass.child_by_field_name("type_parameters") is not None:
            continue
        owner = tree.text_of(klass.child_by_field_name("name"))
        body = klass.child_by_field_name("body")
        members = body.named_children if body is not None else []
        nested = {tree.text_of(member.child_by_field_name("name")): "private" in _modifiers(tree, member)
                  for member in members if member.type in _NESTED_TYPES}
        for member in members:
            method = _method(tree, member, owner, nested) if member.type == "method_declaration" else None
            if method is not None:
                found[method.path] = method
    return found


def declared_types(source: str) -> set[str]:
    """The top-level type names a compilation unit of the default package declares."""
    tree = Source("java", source)
    if any(item.type == "package_declaration" for item in tree.root.named_children):
        return set()
    return {tree.text_of(item.child_by_field_name("name")) for item in tree.root.named_children
            if item.type in _NESTED_TYPES and item.child_by_field_name("name") is not None}


def names_used(methods_pinned: list[Method], import_lines: list[str]) -> set[str]:
    """Every simple name the probe resolves in the default package's scope: the first segment
    of each type it writes (`Map`, `String`, `Ledger` of `Ledger.LedgerEntry`) and of each
    import (`java`). A solution type of the default package named so would stand in for it
    (red team 7: a `String` class made `String recite(int, int)` the solution's own type)."""
    names = set()
    for method in methods_pinned:
        for kind in (*method.params, method.returns, method.owner):
            names |= set(re.findall(r"(?<![\w.])[A-Za-z_$][\w$]*", kind))
    for line in import_lines:
        names.add(line.removeprefix("import").strip().split(".")[0])
    return names


def conflicts(stubs: list[str], references: list[str], solution: list[str]) -> tuple[str, ...]:
    """The names the probe resolves that the solution declares and the stub does not."""
    chosen = pinned(stubs, references)
    if not chosen:
        return ()
    stub_types = set().union(*(declared_types(stub) for stub in stubs))
    solution_types = set().union(*(declared_types(source) for source in solution))
    used = names_used(chosen, sorted({line for stub in stubs for line in imports(stub)}))
    return tuple(sorted((solution_types - stub_types) & used))


def imports(source: str) -> list[str]:
    """The unit's own non-static imports."""
    tree = Source("java", source)
    return [_normal_statement(tree.text_of(item)) for item in tree.root.named_children
            if item.type == "import_declaration" and not re.match(r"import\s+static\b", tree.text_of(item))]


def _modifiers(tree: Source, node) -> set[str]:
    found = next((child for child in node.children if child.type == "modifiers"), None)
    return set(re.findall(r"\b[a-z]+\b", tree.text_of(found))) if found is not None else set()


def _method(tree: Source, member, owner: str, nested: dict[str, bool]) -> Method | None:
    modifiers = _modifiers(tree, member)
    if {"private", "abstract", "native"} & modifiers or member.child_by_field_name("type_parameters") is not None:
        return None
    params: list[str] = []
    for parameter in member.child_by_field_name("parameters").named_children:
        if parameter.type == "formal_parameter":
            params.append(tree.text_of(parameter.child_by_field_name("type")) + _dimensions(tree, parameter))
        elif parameter.type == "spread_parameter":
            kind = next(child for child in parameter.named_children if child.type not in ("modifiers", "variable_declarator"))
            params.append(tree.text_of(kind) + "...")
        else:
            return None  # a receiver parameter
    returns = tree.text_of(member.child_by_field_name("type")) + _dimensions(tree, member)
    types = [_normal(kind) for kind in [*params, returns]]
    if any(re.search(rf"(?<![\w.]){name}\b", kind) for name, private in nested.items() if private for kind in types):
        return None  # a private nested type: not the tests' to name either
    types = [_qualified(kind, owner, nested) for kind in types]
    name = tree.text_of(member.child_by_field_name("name"))
    return Method(owner, name, tuple(types[:-1]), types[-1], "static" in modifiers)


def _dimensions(tree: Source, node) -> str:
    """C-style array brackets after a name (`int a[]`, `int f()[]`)."""
    found = node.child_by_field_name("dimensions")
    if found is None and node.type == "formal_parameter":
        found = next((child for child in node.named_children if child.type == "dimensions"), None)
    return tree.text_of(found) if found is not None else ""


def _qualified(kind: str, owner: str, nested: dict[str, bool]) -> str:
    """A nested type written by its simple name (`LedgerEntry`) as the probe must write it
    (`Ledger.LedgerEntry`)."""
    for name in nested:
        kind = re.sub(rf"(?<![\w.]){name}\b", f"{owner}.{name}", kind)
    return kind


def _normal(type_text: str) -> str:
    text = re.sub(r"\s+", " ", type_text.strip())
    return re.sub(r"\s*([<>\[\],])\s*", r"\1", text).replace(",", ", ")


def _normal_statement(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip())


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
    lines = [*sorted({line for stub in stubs for line in imports(stub)}), "", f"final class {PROBE_CLASS} {{"]
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
