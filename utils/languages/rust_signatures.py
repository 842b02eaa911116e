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
Read with tree-sitter (utils/judging/syntax.py). Pure: text in, text out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..judging.syntax import Source

# The module's name: a compile error inside it is the verdict's evidence (grading.py).
PROBE_MODULE = "polyglot_signatures"


@dataclass(frozen=True)
class Signature:
    path: str                  # `solve`, `Forth::stack`
    params: tuple[str, ...]    # types, the receiver first (`&Forth`)
    returns: str               # `()` when the stub writes none
    lifetimes: str = ""        # `'a` of `pub fn winning_hands<'a>(..)`: the pointer is `for<'a> fn`

    def pointer_type(self) -> str:
        bound = f"for<{self.lifetimes}> " if self.lifetimes else ""
        return f"{bound}fn({', '.join(self.params)}) -> {self.returns}"


def signatures(source: str) -> dict[str, Signature]:
    """The pinnable signatures of a crate root (`src/lib.rs`), by path: its `pub fn`s and those
    of its inherent, non-generic `impl Type` blocks (tree-sitter's Rust grammar)."""
    tree = Source("rust", source)
    found: dict[str, Signature] = {}
    for item in tree.root.named_children:
        if item.type == "function_item":
            functions, owner = [item], None
        elif (item.type == "impl_item" and item.child_by_field_name("trait") is None
              and item.child_by_field_name("type_parameters") is None
              and (kind := item.child_by_field_name("type")) is not None and kind.type == "type_identifier"):
            body = item.child_by_field_name("body")
            functions = [child for child in body.named_children if child.type == "function_item"] if body else []
            owner = tree.text_of(kind)
        else:
            continue
        for function in functions:
            signature = _signature(tree, function, owner)
            if signature is not None:
                found[signature.path] = signature
    return found


def stub_items(source: str) -> tuple[frozenset[str], dict[str, str | None]]:
    """The crate root's own type names (struct, enum, union, trait) and its type aliases, by
    name: the alias's definition, or None for a generic one (it cannot be written out)."""
    tree = Source("rust", source)
    names, aliases = set(), {}
    for item in tree.root.named_children:
        name = item.child_by_field_name("name")
        if name is None:
            continue
        if item.type in ("struct_item", "enum_item", "union_item", "trait_item"):
            names.add(tree.text_of(name))
        elif item.type == "type_item":
            value = item.child_by_field_name("type")
            generic = item.child_by_field_name("type_parameters") is not None
            aliases[tree.text_of(name)] = None if generic or value is None else tree.text_of(value)
    return frozenset(names), aliases


def _written_out(kind: str, crate: str, names: frozenset[str], aliases: dict[str, str | None],
                 depth: int = 0) -> str | None:
    """A type as the stub means it, whatever the solution names alike: the stub's own types by
    the crate's path (`forth::Error`), its aliases by their definitions (the solution may
    redefine `Value`), the rest as written (the probe module sees only the prelude and the
    stub's `use`s: no glob import of the crate for a solution's `type Option<T>` to enter).
    None when a generic alias is used (it is not pinned)."""
    if depth > 8:
        return None
    pieces, at = [], 0
    for match in re.finditer(r"(?<![\w:'])[A-Za-z_]\w*(?![\w])(?!\s*::)", kind):
        name = match.group()
        if name in aliases:
            value = aliases[name]
            replacement = None if value is None else _written_out(_normal(value), crate, names, aliases, depth + 1)
            if replacement is None:
                return None
        elif name in names:
            replacement = f"{crate}::{name}"
        else:
            continue
        pieces += [kind[at:match.start()], replacement]
        at = match.end()
    return "".join(pieces) + kind[at:]


def uses(source: str) -> list[str]:
    """The crate root's own `use` declarations (not `crate::`/`self::`/`super::` ones)."""
    tree = Source("rust", source)
    return [re.sub(r"^pub(\([^)]*\))?\s+", "", re.sub(r"\s+", " ", tree.text_of(item).strip()))
            for item in tree.root.named_children if item.type == "use_declaration"
            and not re.search(r"\b(crate|self|super)\s*::", tree.text_of(item))]


def _signature(tree: Source, function, owner: str | None) -> Signature | None:
    if not any(child.type == "visibility_modifier" for child in function.children):
        return None
    if any(child.type in ("function_modifiers", "where_clause") for child in function.children):
        modifiers = next((tree.text_of(c) for c in function.children if c.type == "function_modifiers"), "")
        if modifiers.strip() != "const":  # unsafe, extern, async: another pointer type; where: bounds
            return None
    lifetimes = ""
    generics = function.child_by_field_name("type_parameters")
    if generics is not None:
        if any(child.type != "lifetime_parameter" for child in generics.named_children):
            return None
        lifetimes = ", ".join(tree.text_of(child) for child in generics.named_children)
    params: list[str] = []
    for parameter in function.child_by_field_name("parameters").named_children:
        if parameter.type == "self_parameter":
            if owner is None or params:
                return None
            text = _normal(tree.text_of(parameter))
            reference = re.match(r"&\s*('\w+\s*)?(mut\s+)?", text)
            params.append(("&" + ("mut " if reference.group(2) else "") if text.startswith("&") else "") + owner)
        elif parameter.type == "parameter":
            kind = parameter.child_by_field_name("type")
            if kind is None or _unpinnable(kind):
                return None
            params.append(tree.text_of(kind))
        else:
            return None  # a variadic or an attribute
    returned = function.child_by_field_name("return_type")
    if returned is not None and _unpinnable(returned):
        return None
    returns = tree.text_of(returned) if returned is not None else "()"
    name = tree.text_of(function.child_by_field_name("name"))
    if owner is not None:
        params = [re.sub(r"\bSelf\b", owner, param) for param in params]
        returns = re.sub(r"\bSelf\b", owner, returns)
    elif "Self" in returns or any("Self" in param for param in params):
        return None
    return Signature(f"{owner}::{name}" if owner else name, tuple(_normal(param) for param in params),
                     _normal(returns), lifetimes)


def _unpinnable(node) -> bool:
    """`impl Trait` has no pointer type; an anonymous lifetime names none to bind."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in ("abstract_type", "ERROR") or (current.type == "lifetime" and current.text == b"'_"):
            return True
        stack.extend(current.children)
    return False


def _normal(type_text: str) -> str:
    """One spelling of a type: whitespace collapsed, none inside brackets or around `&`/`,`."""
    text = re.sub(r"\s+", " ", type_text.strip())
    text = re.sub(r"\s*([<>\[\](),;&])\s*", r"\1", text)
    text = text.replace(",", ", ").replace(";", "; ").replace("&mut", "&mut ").replace("&mut  ", "&mut ")
    text = re.sub(r"(&'\w+)(?=\w)", r"\1 ", text.replace("&' ", "&'"))
    return re.sub(r"\bdyn(?=\S)", "dyn ", text)


def pinned(stub: str, reference: str) -> list[Signature]:
    """The stub's signatures the reference declares alike (same path, same types)."""
    ours = signatures(reference)
    return [signature for path, signature in sorted(signatures(stub).items()) if ours.get(path) == signature]


def probe_module(stub: str, reference: str, crate: str) -> tuple[str, tuple[str, ...]]:
    """The module grading appends to a hidden test file, and the paths it pins ('' and () when
    nothing is pinned). It brings the crate's items and the stub's own `use`s into scope, then
    coerces each pinned function to the stub's function-pointer type."""
    names, aliases = stub_items(stub)
    reference_names, reference_aliases = stub_items(reference)
    written = []
    for signature in pinned(stub, reference):
        # Written out on both sides: a type alias the reference defines otherwise (rust__forth's
        # `Value` is i16 there, i32 in the stub) is the exercise's freedom, not a pin.
        pointer = _written_out(signature.pointer_type(), crate, names, aliases)
        if pointer is not None and pointer == _written_out(signature.pointer_type(), crate, reference_names,
                                                           reference_aliases):
            written.append((signature, pointer))
    if not written:
        return "", ()
    lines = ["#[allow(dead_code, unused_imports, clippy::all)]", f"mod {PROBE_MODULE} {{"]
    lines += [f"    {use}" for use in uses(stub)]
    lines.append("    pub fn pinned() {")
    for signature, pointer in written:
        # The marker on the line: a compile error here shows it (grading's signature_changed).
        lines.append(f"        let _: {pointer} = {crate}::{signature.path}; // {PROBE_MODULE}: {signature.path}")
    lines += ["    }", "}"]
    return "\n".join(lines) + "\n", tuple(signature.path for signature, _ in written)
