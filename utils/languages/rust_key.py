"""Rust's answer key (issue 32): the expected side of a hidden assertion never reaches the sandbox.

A Rust solution is linked into the test binary, and safe Rust can read that process's memory
(rustc #25860: red team 11 read the calling test's machine code and answered what its assertion
wanted; red team 12 told the truth canaries apart by their panic messages). So, as for C++
(utils/languages/cpp_key.py, docs/answer-key.md), at preparation each hidden assertion
`assert_eq!(A, E)` / `assert_eq!(E, A)` (or `assert!(A == E)`) whose expected side E is built
of constants only becomes `crate::polyglot_key::observe("<path>:L<line>", &(A))`, E and the
locals only E used deleted (line numbers kept); a bare `assert!(A)` / `assert!(!A)` becomes the
observation of the bool A (the `!` dropped: nothing in the source says which answer is wanted).
The observer (rust_key_observe.rs, appended to the file) renders A by value through std's own
code; the host compares what the binary reports with the reference's renderings
(utils/judging/answer_key.judge).

Pure text functions: `candidates`, `rewrite`, `enum_impls`, `convert`, `error_ids`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..judging.canaries import apply_edits, call_arguments
from .cpp_key import blank_lines, numbered

OBSERVATIONS_FILE = "observations.tsv"  # in the report directory (docker/rust/polyglot-rust-test)
PRELUDE = (Path(__file__).parent / "rust_key_observe.rs").read_text(encoding="utf-8")
OBSERVE = "crate::polyglot_key::observe"

_MACRO = re.compile(r"(?<![\w!:])(?P<macro>assert_eq|assert)!\(")
_TEST_FN = re.compile(r"^[ \t]*#\[test\][ \t]*\n(?P<attributes>(?:[ \t]*(?:#\[[^\n]*\]|///[^\n]*)[ \t]*\n)*)"
                      r"[ \t]*fn \w+\(\)[ \t]*\{", re.M)
_STRING = re.compile(r'(?:br|b|r|c)?(#*)"(?:[^"\\]|\\.)*?"\1|(?:b)?\'(?:[^\'\\\n]|\\(?:[nrt0\\\'"]|x[0-9a-fA-F]{2}'
                     r'|u\{[0-9a-fA-F]+\}))\'|//[^\n]*|/\*.*?\*/', re.S)
_WORD = re.compile(r"(?<![\w'])[A-Za-z_]\w*")
_PRIMITIVES = frozenset("i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize bool char str f32 f64".split())
# Words an expected side may spell besides its locals and the stub's enum variants: literals'
# wrappers and std's constructors of a value (`Some(vec![1])`, `String::from("x")`, `3 as u8`).
_PLAIN = frozenset("true false Some None Ok Err as _ vec String Vec HashMap HashSet BTreeMap BTreeSet VecDeque "
                   "std collections string vec".split()) | _PRIMITIVES
_METHODS = frozenset("to_string to_owned to_vec iter into_iter cloned copied collect".split())
_PATH_CALLS = frozenset("from new".split())
_PRIMITIVE_CONSTANTS = frozenset("MAX MIN".split())
_LET = re.compile(r"^let\s+(?:mut\s+)?(?P<name>[a-z_]\w*)\s*(?::(?P<type>[^=]+))?=(?P<init>.*)$", re.S)


@dataclass(kw_only=True, frozen=True)
class Candidate:
    """A convertible assertion: its id (`L<line>`, `.n` for the n-th on that line), the macro
    call's span (without its `;`), the observed expression, whether it is a bool observation
    (a bare `assert!`), and the spans of the `let`s deleted with its expected side."""
    id: str
    start: int
    end: int
    observed: str
    deleted: tuple[tuple[int, int], ...] = ()
    truth: bool = False


@dataclass(frozen=True)
class _Let:
    start: int
    end: int  # just after its `;`
    name: str
    text: str  # the type and the initializer


@dataclass(frozen=True)
class Enum:
    """A top-level `pub enum` of the stub: its name and variants, each (name, fields) with
    fields None (a unit variant), a tuple of types (a tuple variant) or of (field, type)."""
    name: str
    variants: tuple[tuple[str, object], ...]


def mask(text: str) -> str:
    """`text` with the insides of strings, chars and comments blanked (same length, newlines
    kept): brackets and words are then the code's own."""
    def blanked(literal: str) -> str:
        inner = re.sub(r"[^\n]", " ", literal[1:-1])
        if literal.startswith("/"):
            return re.sub(r"[^\n]", " ", literal)
        quote = "'" if literal.lstrip("b").startswith("'") else '"'
        return quote + inner + quote  # a prefix (`b`, `r#`) blanked too: no word is left of a literal
    return _STRING.sub(lambda m: blanked(m[0]), text)


def stub_enums(stub: str) -> dict[str, Enum]:
    """The stub's top-level, non-generic `pub enum`s (the solution keeps their variants: the
    tests name them)."""
    masked = mask(stub)
    found = {}
    for match in re.finditer(r"^pub enum (?P<name>[A-Z]\w*)\s*\{", masked, re.M):
        end = _close(masked, match.end() - 1)
        variants = []
        for part in _split_top(masked[match.end():end - 1]):
            part = re.sub(r"#\[[^\]]*\]", "", stub[match.end() + part[0]:match.end() + part[1]]).strip()
            variant = re.match(r"(?P<name>[A-Z]\w*)\s*(?P<rest>.*)$", part, re.S)
            if variant is None:
                continue
            rest = variant["rest"].strip()
            if not rest or rest.startswith("="):
                variants.append((variant["name"], None))
            elif rest.startswith("("):
                variants.append((variant["name"], tuple(rest[1 + a:1 + b].strip() for a, b in _split_top(rest[1:-1]))))
            elif rest.startswith("{"):
                fields = tuple(tuple(s.strip() for s in rest[1 + a:1 + b].split(":", 1))
                               for a, b in _split_top(rest[1:-1]))
                variants.append((variant["name"], fields))
        found[match["name"]] = Enum(match["name"], tuple(variants))
    return found


def _close(text: str, open_at: int) -> int:
    """Offset just after the bracket closing the one at `open_at` (in masked text)."""
    depth = 0
    for index in range(open_at, len(text)):
        depth += 1 if text[index] in "([{" else -1 if text[index] in ")]}" else 0
        if depth == 0:
            return index + 1
    return len(text)


def _split_top(text: str) -> list[tuple[int, int]]:
    """Spans of the top-level comma-separated parts of masked `text` (angle brackets count)."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += 1 if char in "([{<" else -1 if char in ")]}>" else 0
        if char == "," and depth == 0:
            parts.append((start, index))
            start = index + 1
    parts.append((start, len(text)))
    return [(a, b) for a, b in parts if text[a:b].strip()]


# --- which assertions convert -------------------------------------------------------------

def candidates(test: str, enums: dict[str, Enum], crate: str, only: frozenset[str] | None = None) -> list[Candidate]:
    """Every convertible assertion of a test file (or those of `only`'s ids), in source order:
    one whose deleted locals anything left in its test still spells is left out, until none is."""
    masked = mask(test)
    found: list[Candidate] = []
    bodies = _bodies(test, masked)
    for start, end in bodies:
        lets = _lets(masked, test, start, end)
        for match in _MACRO.finditer(masked, start, end):
            candidate = _candidate(test, masked, match, lets, enums, crate)
            if candidate is not None:
                found.append(candidate)
    found = [c for c in numbered(test, found) if only is None or c.id in only]
    while True:
        kept = _deletions_unused(masked, bodies, found)
        if len(kept) == len(found):
            return kept
        found = kept


def _bodies(test: str, masked: str) -> list[tuple[int, int]]:
    """The bodies of the `#[test]` functions (not `should_panic` ones: their panic is the check)."""
    bodies = []
    for match in _TEST_FN.finditer(masked):
        if "should_panic" in test[match.start():match.end()]:
            continue
        bodies.append((match.end(), _close(masked, match.end() - 1) - 1))
    return bodies


def _lets(masked: str, test: str, start: int, end: int) -> list[_Let]:
    """The `let` statements at the top level of a body."""
    found, depth, statement = [], 0, start
    for index in range(start, end):
        char = masked[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0 and char == "}" and not masked[statement:index].lstrip().startswith("let"):
                statement = index + 1
        elif char == ";" and depth == 0:
            text = masked[statement:index]
            match = _LET.match(text.strip())
            if match:
                begin = statement + len(text) - len(text.lstrip())
                found.append(_Let(begin, index + 1, match["name"], (match["type"] or "") + " " + match["init"]))
            statement = index + 1
    return found


def _candidate(test: str, masked: str, match: re.Match[str], lets: list[_Let], enums: dict[str, Enum],
               crate: str) -> Candidate | None:
    before = masked[:match.start()].rstrip()
    if before and before[-1] not in "{};":
        return None  # not a statement of its own (a closure's body, a match arm)
    spans = call_arguments(masked, match.end() - 1, quotes="")
    if not spans:
        return None
    end = _close(masked, match.end() - 1)
    if match["macro"] == "assert_eq":
        if len(spans) != 2:
            return None  # a message may format the expected value
        sides = [masked[a:b] for a, b in spans]
        texts = [test[a:b] for a, b in spans]
    else:
        if len(spans) != 1:
            return None
        code = masked[slice(*spans[0])]
        split = _split_equality(code)
        if split is None:
            if _top_level_operator(code):
                return None  # `a < b`, `a && b`: not a value the test states
            negated = code.lstrip().startswith("!") and not code.lstrip().startswith("!=")
            offset = spans[0][0] + (len(code) - len(code.lstrip()) + 1 if negated else 0)
            observed = test[offset:spans[0][1]].strip()
            if _constant(mask(observed), [], enums, crate, match.start()) is not None:
                return None
            return Candidate(id="", start=match.start(), end=end, observed=observed, truth=True)
        position = spans[0][0] + split
        sides = [masked[spans[0][0]:position], masked[position + 2:spans[0][1]]]
        texts = [test[spans[0][0]:position].strip(), test[position + 2:spans[0][1]].strip()]
    constants = [_constant(side, lets, enums, crate, match.start()) for side in sides]
    if sum(c is not None for c in constants) != 1:
        return None  # both constant (nothing of the solution's), or neither (two of its values)
    expected = 0 if constants[0] is not None else 1
    return Candidate(id="", start=match.start(), end=end, observed=texts[1 - expected],
                     deleted=tuple((let.start, let.end) for let in constants[expected]))


def _split_equality(code: str) -> int | None:
    """The offset of a lone top-level `==` in masked `code`."""
    positions = [index for index, depth in _top_level(code) if code.startswith("==", index)]
    if len(positions) != 1 or _top_level_operator(code[:positions[0]]) or _top_level_operator(code[positions[0] + 2:]):
        return None
    return positions[0]


def _top_level(code: str):
    """(offset, depth) of each character of masked `code` outside brackets and turbofish `::<..>`."""
    depth, angle, index = 0, 0, 0
    while index < len(code):
        if code.startswith("::<", index):
            angle += 1
            index += 3
            continue
        char = code[index]
        if angle:
            angle += 1 if char == "<" else -1 if char == ">" else 0
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0:
            yield index, depth
        index += 1


def _top_level_operator(code: str) -> bool:
    return any(code.startswith(op, index) or code[index] in "<>|?" for index, _ in _top_level(code)
               for op in ("==", "!=", "&&", "||", "<=", ">="))


def _constant(side: str, lets: list[_Let], enums: dict[str, Enum], crate: str, before: int,
              seen: frozenset[str] = frozenset()) -> list[_Let] | None:
    """The `let`s a masked expression of constants needs (transitively), or None when it spells
    anything but literals, std's wrappers and constructors, the stub's enum variants, primitive
    casts and such locals (never a call of the solution's: deleting it would change what runs)."""
    if re.search(r"[{}=|?#$<>]", side) or not side.strip():
        return None
    needed: list[_Let] = []
    for word in _WORD.finditer(side):
        name, after, prior = word[0], side[word.end():].lstrip(), side[:word.start()].rstrip()
        if after.startswith("!"):
            if name != "vec":
                return None
            continue
        if prior.endswith("."):
            if name not in _METHODS:
                return None
            continue
        if prior.endswith("::"):
            continue  # judged with the path's head
        if after.startswith("::"):
            if not _path_constant(side[word.start():], enums, crate):
                return None
            continue
        if name in _PLAIN:
            continue
        local = _local(lets, name, before)
        if local is None or name in seen:
            return None
        inner = _constant(mask(local.text), lets, enums, crate, local.start, seen | {name})
        if inner is None:
            return None
        needed += [let for let in [local] + inner if let not in needed]
    return needed


def _path_constant(code: str, enums: dict[str, Enum], crate: str) -> bool:
    path = re.match(r"(?:\w+\s*::\s*)+\w+", code)
    if path is None:
        return False
    segments = [segment.strip() for segment in path[0].split("::")]
    if segments[0] in (crate, "crate") and len(segments) > 1:
        segments = segments[1:]
    calls = code[path.end():].lstrip().startswith("(")
    if len(segments) == 2 and segments[0] in enums:
        return segments[1] in dict(enums[segments[0]].variants)
    if len(segments) == 2 and segments[0] in _PRIMITIVES:
        return segments[1] in _PRIMITIVE_CONSTANTS and not calls
    return all(segment in _PLAIN for segment in segments[:-1]) and segments[-1] in _PATH_CALLS and calls


def _local(lets: list[_Let], name: str, before: int) -> _Let | None:
    earlier = [let for let in lets if let.name == name and let.end <= before]
    return earlier[-1] if earlier else None


def _deletions_unused(masked: str, bodies: list[tuple[int, int]], found: list[Candidate]) -> list[Candidate]:
    """The candidates whose deleted locals nothing left in their test body spells."""
    kept = []
    for start, end in bodies:
        inside = [c for c in found if start <= c.start < end]
        edits = [(c.start - start, c.end - start, " " + mask(c.observed) + " ") for c in inside]
        edits += [(a - start, b - start, " ") for a, b in {span for c in inside for span in c.deleted}]
        words = set(_WORD.findall(apply_edits(masked[start:end], edits)))
        kept += [c for c in inside if not any(_LET.match(masked[a:b].strip())["name"] in words for a, b in c.deleted)]
    return kept


# --- the rewrite ------------------------------------------------------------------------

def conversion_edits(test: str, chosen: Sequence[Candidate], prefix: str = "") -> list[tuple[int, int, str]]:
    """Each assertion an observation starting on its own first line (rustc then names that line
    for a type the observer refuses), its expected side's `let`s blank lines."""
    edits = []
    for candidate in chosen:
        statement = test[candidate.start:candidate.end]
        call = f'{OBSERVE}("{prefix}{candidate.id}", &({candidate.observed}))'
        edits.append((candidate.start, candidate.end, call + "\n" * (statement.count("\n") - candidate.observed.count("\n"))))
    deleted = {span for candidate in chosen for span in candidate.deleted}
    return edits + [(start, end, blank_lines(test[start:end])) for start, end in sorted(deleted)]


def rewrite(test: str, chosen: Sequence[Candidate], prefix: str = "", impls: str = "") -> str:
    """The test file with `chosen` converted, the observer and the enums' impls after it (the
    test's own lines keep their numbers)."""
    return apply_edits(test, conversion_edits(test, chosen, prefix)) + "\n" + PRELUDE + impls


_RENDERABLE = re.compile(r"^(?:&'static str|String|bool|char|[iu](?:8|16|32|64|128|size)|(?:Vec|Option|Box)<(?P<inner>.+)>)$")


def _renderable(kind: str, enums: dict[str, Enum]) -> bool:
    kind = re.sub(r"\s+", "", kind)
    match = _RENDERABLE.match(kind.replace("&'staticstr", "&'static str"))
    if match:
        return match["inner"] is None or _renderable(match["inner"], enums)
    return kind in enums


def enum_impls(test: str, enums: dict[str, Enum], crate: str) -> str:
    """The observer's impl for each stub enum the test file names: a variant the tests name
    rendered by name (and its fields by value), by pattern; any other by its discriminant."""
    masked = mask(test)
    impls = []
    for enum in enums.values():
        named = [(name, fields) for name, fields in enum.variants
                 if re.search(rf"\b{enum.name}\s*::\s*{name}\b", masked)]
        if not named or not all(fields is None or all(_renderable(f if isinstance(f, str) else f[1], enums) for f in fields)
                                for _, fields in named):
            continue
        path = f"::{crate}::{enum.name}"
        arms = []
        for name, fields in named:
            if fields is None:
                arms.append(f'{path}::{name} => crate::polyglot_key::variant("{name}", out),')
            elif fields and isinstance(fields[0], str):
                bindings = ", ".join(f"f{i}" for i in range(len(fields)))
                body = " ".join(f"crate::polyglot_key::field({i}, f{i}, out);" for i in range(len(fields)))
                arms.append(f'{path}::{name}({bindings}) => {{ crate::polyglot_key::variant("{name}", out); {body} '
                            f"out.push(')'); }}")
            else:
                names = [field for field, _ in fields]
                body = " ".join(f"crate::polyglot_key::field({i}, {field}, out);" for i, field in enumerate(names))
                arms.append(f'{path}::{name} {{ {", ".join(names)}, .. }} => {{ crate::polyglot_key::variant("{name}", out); '
                            f"{body} out.push(')'); }}")
        impls.append(f"impl crate::polyglot_key::Observe for {path} {{\n"
                     f"    fn polyglot_key_render(&self, out: &mut ::std::string::String) {{\n"
                     f"        #[allow(unreachable_patterns)]\n        match self {{\n            "
                     + "\n            ".join(arms)
                     + "\n            _ => crate::polyglot_key::unnamed(self, out),\n        }\n    }\n}\n")
    return "".join(impls)


# --- the pipeline's seam (utils/judging/answer_key.AnswerKey) --------------------------------

def crate_name(pristine: Path) -> str:
    import tomllib

    try:
        manifest = tomllib.loads((pristine / "Cargo.toml").read_text(encoding="utf-8"))
        return str(manifest.get("lib", {}).get("name") or manifest["package"]["name"]).replace("-", "_")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError):
        return ""


def convert(tree: Path, pristine: Path, hidden_paths: Sequence[str], solution_paths: Sequence[str],
            only: frozenset[str] | None) -> frozenset[str]:
    """Rewrite the hidden test files in `tree` (ids `path:Lnn`; `only`: those ids, None: every
    candidate); the stub's enums are read from the pristine tree. The ids converted."""
    crate = crate_name(pristine)
    stub = pristine / "src" / "lib.rs"
    enums = stub_enums(stub.read_text(encoding="utf-8", errors="replace")) if stub.is_file() else {}
    converted: set[str] = set()
    for path in hidden_paths:
        target = tree / path
        if not (path.startswith("tests/") and path.endswith(".rs")) or not target.is_file() or not crate:
            continue
        test = target.read_text(encoding="utf-8")
        wanted = None if only is None else frozenset(i.split(":", 1)[1] for i in only if i.startswith(path + ":"))
        chosen = candidates(test, enums, crate, wanted)
        if chosen:
            target.write_text(rewrite(test, chosen, f"{path}:", enum_impls(test, enums, crate)), encoding="utf-8")
            converted.update(f"{path}:{candidate.id}" for candidate in chosen)
    return frozenset(converted)


_ERROR = re.compile(r"^(?:error|warning)(?P<code>\[E\d+\])?:.*?\n\s*--> (?P<path>[^:\n]+):(?P<line>\d+):\d+", re.M)


def error_lines(output: str) -> dict[str, set[int]]:
    """The lines rustc's errors point at, by file (warnings left out)."""
    lines: dict[str, set[int]] = {}
    for match in _ERROR.finditer(output):
        if match[0].startswith("error"):
            lines.setdefault(match["path"], set()).add(int(match["line"]))
    return lines


def error_ids(output: str, hidden_paths: Sequence[str], ids: frozenset[str]) -> frozenset[str]:
    """The converted ids the compiler refused: the observation on the line an error names, else
    (an error on another line, e.g. a `let` whose type came from the deleted expected side) the
    first converted assertion after it."""
    refused = set()
    by_file = error_lines(output)
    for path in hidden_paths:
        mine = sorted((int(i.split(":L", 1)[1].split(".")[0]), i) for i in ids if i.startswith(path + ":"))
        for line in by_file.get(path, ()):
            same = [i for number, i in mine if number == line]
            after = [i for number, i in mine if number > line][:1]
            refused.update(same or after)
    return frozenset(refused)
