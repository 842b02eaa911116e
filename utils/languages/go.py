"""Go: `go test -json`, one package per exercise."""

from __future__ import annotations

import re
from dataclasses import replace

from ..judging import runner_results, tree_facts
from ..judging.source_facts import ID, STR, Fact, Token, TokenList, matching, name_facts, string_facts
from ..judging.source_policy import (DIRECTIVE, IMPORT, INTROSPECTION, NAME, PROCESS_CONTROL, STRING, TEST_FRAMEWORK,
                                     TEST_SOURCES, SourcePolicy, rules)
from ..judging.canaries import (Assertion, Canary, CanaryError, Leaf, Mutator, Planter, TestUnit, call_arguments,
                                 apply_edits, line_end, matching_brace, plant_after)
from . import go_variants
from .go_tables import (RANGE as _RANGE, SCAN as _SCAN, TABLE as _TABLE, Table as _Table, entry_values as _entry_values,
                        go_literal, go_string as _go_string, go_value, table_at as _table_at, tables as _tables,
                        uses as _uses)
from .spec import COMMON_ARTIFACTS, LanguageSpec, no_unskip, origin_unknown

# --- canaries ---------------------------------------------------------------------------

_TEST = re.compile(r"^func (?P<name>Test\w*)\((?P<t>\w+) \*testing\.T\) \{", re.M)


def find_units(text: str) -> list[TestUnit]:
    units = []
    for match in _TEST.finditer(text):
        end = matching_brace(text, match.end() - 1, backtick=True)
        units.append(TestUnit(match["name"], match.start(), line_end(text, end - 1)))
    return units


def plant_file(text: str, chosen: list[tuple[TestUnit, Canary]]) -> str:
    return plant_after(text, chosen, "func {}(", lambda indent, canary: (
        f"func {canary.source}(t *testing.T) {{\n"
        f"\t{canary.hidden_name}(t)\n"
        f"\tif !t.Failed() {{\n"
        f"\t\tt.Fatalf(\"got %d, want %d\", {canary.actual}, {canary.expected})\n"
        f"\t}}\n}}\n"))


def leaf(reported: str) -> Leaf | None:
    head, separator, path = reported.partition("::")
    if not separator or not path:
        return None
    name, slash, _ = path.partition("/")
    return Leaf(name, len(head) + 2, bool(slash))


def rename(test: str, name: str, new_name: str) -> str:
    return re.sub(rf"^func {re.escape(name)}\(", f"func {new_name}(", test, count=1, flags=re.M)


# --- mutated table canaries: the copy ranges over its table, written inline, one entry changed ---
#
# Go tests are table-driven: `for _, tc := range testCases { ... t.Fatalf("... want %q", ..., tc.expected) }`
# with `var testCases = []struct{...}{...}` at package level (often in cases_test.go). The
# "assertion" of a test is an entry's expected field: a field compared with `==`/`!=` (or
# reflect.DeepEqual) to what the solution returned and printed by the failure call after
# that comparison. The copy is the test itself, renamed, ranging over the table's literal
# written inline with that one field changed, so it runs every case as the real test does
# (same subtests, same calls) and fails only the changed one, with the test's own message.

_ENTRY_INDEX = "polyglotEntry"  # the loop's index where the test names none (`for _, tc := range`)
_FAILURE_CALL = re.compile(r"\bt\.(?:Errorf|Fatalf)\(")
_VERB = re.compile(r"%(?P<flags>[-+# 0]*)(?P<width>\d+)?(?:\.\d+)?(?P<verb>[a-zA-Z%])")


def _rendered(value: int | str | bool, flags: str, verb: str) -> str | None:
    """How fmt prints `value` under one verb, for the verbs these tests use; None otherwise."""
    if "0" in flags or ("+" in flags and verb != "v"):
        return None
    if isinstance(value, bool):
        return ("true" if value else "false") if verb in "tv" else None
    if isinstance(value, int):
        return str(value) if verb in "dv" else None
    if verb == "q" or (verb == "v" and "#" in flags):
        return f'"{value}"'
    return value if verb in "sv" else None


def _rendered_slice(type_name: str, elements: list, flags: str, verb: str) -> str | None:
    """How fmt prints a flat slice of plain values (fmt applies the verb to each element)."""
    if verb == "v" and "#" in flags:  # Go syntax: unsigned integers in hexadecimal
        shown = [f"0x{element:x}" if type_name.startswith("uint") else go_literal(element) for element in elements]
        return f"[]{type_name}{{" + ", ".join(shown) + "}"
    shown = [_rendered(element, flags.replace("#", ""), verb) for element in elements]
    return None if None in shown else "[" + " ".join(shown) + "]"


def failure_regex(call: str, slot: int, value) -> str | None:
    """The regex (whole lines, re.M) of what `t.Errorf/Fatalf(format, args...)` prints when
    argument `slot` (1 = the first after the format) holds `value` (or prints as the callable
    `value(flags, verb)` says: a slice); the other arguments may
    print anything. None when the format is not a string literal or its verbs are not
    followed (explicit argument indexes, a verb this value does not print under)."""
    arguments = call_arguments(call, call.index("("), **_SCAN) or []
    template = _go_string(call[arguments[0][0]:arguments[0][1]]) if arguments else None
    if template is None or "%[" in template or "%*" in template:
        return None
    template = template[:-1] if template.endswith("\n") else template
    pieces, position, argument = [], 0, 1
    for verb in _VERB.finditer(template):
        pieces.append(_literal_text(template[position:verb.start()]))
        position = verb.end()
        if verb["verb"] == "%":
            pieces.append("%")
            continue
        if argument == slot:
            shown = value(verb["flags"], verb["verb"]) if callable(value) else _rendered(value, verb["flags"], verb["verb"])
            if shown is None:
                return None
            padding = r"\s*" if verb["width"] else ""
            pieces.append(padding + re.escape(shown) + padding)
        else:
            pieces.append(r"[\s\S]*?")
        argument += 1
    pieces.append(_literal_text(template[position:]))
    return r"^\s+\w+\.go:\d+: " + "".join(pieces) + "$"


def _literal_text(text: str) -> str:
    """A format's fixed text: the testing package indents a message's continuation lines."""
    return r"\n\s*".join(re.escape(line) for line in text.split("\n"))


def _expected_fields(test: str, var: str) -> dict[str, str]:
    """Fields of the loop variable compared to a computed value (not to nil or a literal), each
    with the first failure call after that comparison that prints the field: field -> call."""
    fields = {}
    for field in dict.fromkeys(re.findall(rf"\b{var}\.(\w+)\b", test)):
        access = rf"\b{var}\.{field}\b(?!\s*[.(\[])"
        compared = re.search(rf"(?:[!=]=\s*{access}|{access}\s*[!=]=(?!\s*(?:nil\b|[\"'`\d-]))|DeepEqual\([^;\n]*{access})", test)
        if compared is None:
            continue
        call = _printing_call(test, compared.end(), f"{var}.{field}")
        if call is not None:
            fields[field] = call
    return fields


def _printing_call(test: str, after: int, access: str) -> str | None:
    for match in _FAILURE_CALL.finditer(test, after):
        arguments = call_arguments(test, match.end() - 1, **_SCAN)
        if arguments and any(test[start:end] == access for start, end in arguments[1:]):
            return test[match.start():arguments[-1][1] + 1]
    return None


def _slot_of(call: str, access: str) -> int:
    arguments = call_arguments(call, call.index("("), **_SCAN) or []
    return next(index for index, (start, end) in enumerate(arguments) if call[start:end] == access)


def assertions_in(test: str, every_test: str) -> list[Assertion]:
    """One assertion per entry of the table the test ranges over (in table order): the entry's
    first expected field holding a plain literal whose failure message can be predicted."""
    tables = _tables(every_test)
    signature = _TEST.match(test)
    for loop in _RANGE.finditer(test):
        names = [name for name in re.finditer(r"\b\w+\b", loop["expr"]) if name[0] in tables]
        index = loop["index"] if loop["index"] not in (None, "_") else _ENTRY_INDEX
        if names and signature and (loop["op"] == ":=" or index != _ENTRY_INDEX):
            table = tables[names[0][0]]
            indent = test[test.rfind("\n", 0, loop.start()) + 1:loop.start()]
            gate = (f"\n{indent}\tif {index} == {len(table.entries) - 1} && {signature['t']}.Failed() {{"
                    f"\n{indent}\t\tbreak\n{indent}\t}}")
            head = f"for {index}, {loop['var']} {loop['op']} range " + loop["expr"][:names[0].start()]
            rest = test[loop.start("expr") + names[0].end():loop.end()] + gate
            found = _table_assertions(test, (loop.start(), loop.end()), head, rest, table, loop["var"])
            alone = not _read_elsewhere(names[0][0], test, every_test)
            return [replace(assertion, symmetric=alone) for assertion in found]
    return []


def _read_elsewhere(table: str, test: str, every_test: str) -> bool:
    """Whether anything but this test (and benchmarks, never run) names the table: then it stays
    whole in the package, and the real test keeps ranging over it. Written inline as well, the
    real value would be in the test binary twice and the copy's once (red team 9 read
    go__hexadecimal's pair by that majority from memory: TestHandleErrors indexes `testCases[i]`)."""
    return _uses(table, _without_spans(every_test, _not_run(every_test))) - _uses(table, test) > 1  # less its declaration


def _not_run(text: str) -> list[tuple[int, int]]:
    return [(m.start(), line_end(text, matching_brace(text, text.index("{", m.end()), backtick=True) - 1))
            for m in _NOT_RUN.finditer(text)]


def _table_assertions(test: str, span: tuple[int, int], head: str, rest: str, table: _Table,
                      var: str) -> list[Assertion]:
    fields = _expected_fields(test, var)
    found = []
    for entry in table.entries:
        for field, start, end in _entry_values(table, entry):
            if field not in fields:
                continue
            call = fields[field]
            point = _mutable_point(table.text, start, end)
            if point is None:
                continue
            slot, value, shown = point
            argument = _slot_of(call, f"{var}.{field}")
            if failure_regex(call, argument, shown(value)) is None:
                continue
            found.append(_assertion(table, span, (head, rest), entry, slot, value,
                                    lambda new, c=call, a=argument, s=shown: failure_regex(c, a, s(new))))
            break
    return found


_SLICE = re.compile(r"\[\](?P<type>string|int|int8|int16|int32|int64|uint|uint16|uint32|uint64)\{")


def _mutable_point(text: str, start: int, end: int):
    """The literal a copy changes in a field's value: the value itself when plain, else the
    first element of a flat slice of plain values (`[]string{"a", "b"}`): its span, its value
    and how a new value shows in a message (the whole slice for a slice)."""
    value = go_value(text[start:end])
    if value is not None:
        return (start, end), value, lambda new: new
    match = _SLICE.match(text, start)
    if match is None or matching_brace(text, match.end() - 1, backtick=True) != end:
        return None
    elements = call_arguments(text, match.end() - 1, **_SCAN) or []
    values = [go_value(text[a:b]) for a, b in elements]
    if not values or any(value is None or isinstance(value, bool) for value in values):
        return None

    def shown(new):
        return lambda flags, verb: _rendered_slice(match["type"], [new] + values[1:], flags, verb)
    return elements[0], values[0], shown


def _assertion(table: _Table, span: tuple[int, int], around: tuple[str, str], entry: tuple[int, int],
               slot: tuple[int, int], value, failure) -> Assertion:
    def written(new: int | str | bool) -> str:
        changed = table.text[entry[0]:slot[0]] + go_literal(new) + table.text[slot[1]:entry[1]]
        return around[0] + "(" + _entry_last(table, entry, changed) + ")" + around[1]

    return Assertion(start=span[0], end=span[1], value=value, failure=lambda new: failure(new) or "$^", written=written,
                     context=(table.text[:slot[0]] + " " + table.text[slot[1]:], table.text))


def _entry_last(table: _Table, moved: tuple[int, int], changed: str) -> str:
    """The table's literal with one entry (changed) moved to the end: the copy runs it after
    every other entry, and runs it only when none of them failed (`t.Failed()`: the gate), so
    the copy's message shows only when every other case of the table passed. A stream
    rewriter that keeps failing only the copy's one extra failure (the pair's difference)
    then needs a solution that passes the whole table, as the fallback needed. The real test
    is written the same way with its entry unchanged (`Mutation.real_literal`): it skips that
    one entry only when another already failed, and the pair differs in the value alone."""
    others = [table.text[start:end] for start, end in table.entries if (start, end) != moved]
    head = table.text[:table.entries[0][0]]
    indent = head[head.rfind("\n") + 1:]
    indent = indent if not indent.strip() else "\t"  # `}{{` opens some tables on one line
    return head + f",\n{indent}".join(others + [changed]) + ",\n}"


_NOT_RUN = re.compile(r"^func (?:Benchmark|Example)\w*\(", re.M)


def empty_unranged_tables(texts: dict) -> dict:
    """Each package table that no test reads any more, emptied (`var cases = []T{}`): once its
    tests range over their inline copies, the table would be the one place a pair's real value
    appears twice (`bench/canary_readers.py` read the real test of a pair by that 84 % of the
    time). Benchmarks and examples (never run) may still name it; any other reference keeps it."""
    outside = {path: _without_spans(text, _not_run(text)) for path, text in texts.items()}
    changed = {}
    for path, text in texts.items():
        edits = []
        for match in _TABLE.finditer(text):
            table = _table_at_or_none(text, match)
            uses = sum(_uses(match["name"], other) for other in outside.values())
            if table is not None and table.entries and uses == 1:  # its own declaration only
                start = match.start("type") + table.body
                edits.append((start, match.start("type") + len(table.text), "{}"))
        if edits:
            changed[path] = apply_edits(text, edits)
    return changed


def _table_at_or_none(text: str, match: re.Match) -> _Table | None:
    try:
        return _table_at(text, match)
    except CanaryError:
        return None


def _without_spans(text: str, spans: list[tuple[int, int]]) -> str:
    return apply_edits(text, [(start, end, "") for start, end in spans])


PLANTER = Planter(file_globs=("**/*_test.go",), name_style="camel", find_units=find_units, plant_file=plant_file, leaf=leaf,
                  mutator=Mutator(lambda test: [], rename, go_literal, assertions_in),
                  fallback_failure=lambda expected, actual: rf"^\s+\w+\.go:\d+: got {actual}, want {expected}$",
                  finish=empty_unranged_tables)

# --- the source policy (utils/judging/source_policy.py) ------------------------------------

# Go as tree-sitter-go lexes it (utils/judging/tree_facts.py): strings and runes by node type.
LEXICON = tree_facts.Lexicon(language="go", comments=frozenset({"comment"}), strings={
    "interpreted_string_literal": tree_facts.quoted,
    "raw_string_literal": lambda text: tree_facts.between(text).replace("\r", ""),  # as the compiler drops them
    "rune_literal": tree_facts.quoted,
})
# Comments the compiler reads: `//go:linkname`, `//export` (cgo), `//line` and `/*line …*/`.
_DIRECTIVE_COMMENT = re.compile(r"(?://|/\*)(go:|export\b|line\b)")


def go_facts(text: str) -> tuple[Fact, ...]:
    """Imports (`import . "os"` a directive too), `//go:` comments, names as used with the
    import aliases resolved (`import x "os"; x.Exit` is `os.Exit`), strings (`+` folded)."""
    lexed = tree_facts.lex(text, LEXICON)
    facts, aliases = [], {}
    for toks in lexed.streams:
        facts += _go_imports(toks, aliases)
    facts += [Fact(DIRECTIVE, comment.text[2:].removesuffix("*/").strip(), comment.line) for comment in lexed.comments
              if _DIRECTIVE_COMMENT.match(comment.text)]
    for toks in lexed.streams:
        facts += list(string_facts(toks))
        for nth in range(max(map(len, aliases.values()), default=1)):  # a name several imports bind: each
            facts += name_facts(toks, lambda name: aliases.get(name, [name])[min(nth, len(aliases.get(name, [name])) - 1)])
    return tuple(facts)


def _go_imports(toks: TokenList, aliases: dict[str, list[str]]) -> list[Fact]:
    """Every path an `import` declaration names; the name each binds (its alias, or the
    path's last element) noted in `aliases`."""
    facts: list[Fact] = []
    for index, token in enumerate(toks):
        if token.kind == ID and token.text == "import":
            opens = index + 1 < len(toks) and toks[index + 1].text == "("
            end = matching(toks, index + 1) if opens else index + 3
            for at in range(index + 1, min(end + 1, len(toks))):
                if toks[at].kind == STR:
                    facts += _go_import(toks[at], toks[at - 1], aliases)
    return facts


def _go_import(path: Token, before: Token, aliases: dict[str, list[str]]) -> list[Fact]:
    alias = before.text if (before.kind == ID or before.text in (".", "_")) and before.text != "import" else None
    for name in [alias] if alias else _package_names(path.text):
        aliases.setdefault(name, []).append(path.text)
    facts = [Fact(IMPORT, path.text, path.line)]
    return facts + [Fact(DIRECTIVE, f"dot_import {path.text}", path.line)] if alias == "." else facts


def _package_names(path: str) -> list[str]:
    """The names an import without an alias may bind: a package's name is its own clause's, most
    often its path's last element, the one before a major version (`math/rand/v2` binds `rand`),
    or that element less a version (`gopkg.in/yaml.v3`). A name bound twice resolves to every
    path (red team 10: `import (v2 "os"; "math/rand/v2")` made `v2.Exit` read as rand's)."""
    parts = path.split("/")
    names = [parts[-1], re.sub(r"\.v\d+$", "", parts[-1])]
    if len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]):
        names.append(parts[-2])
    return list(dict.fromkeys(names))


SOURCE_POLICY = SourcePolicy((".go",), go_facts, rules(
    ("testing", TEST_FRAMEWORK, IMPORT, r"^(testing(/.*)?|github\.com/stretchr/.*)$"),
    # test2json reads these from the test binary's output: printing them forges results.
    ("runner_output", TEST_FRAMEWORK, STRING, r"(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|FAIL|SKIP)|\"Action\")"),
    ("unsafe", INTROSPECTION, IMPORT, r"^(unsafe|C|plugin|runtime/(debug|pprof|trace|cgo)|internal/.*|go/.*)$"),
    ("runtime_introspection", INTROSPECTION, NAME,
     r"^runtime\.(Caller|Callers|CallersFrames|FuncForPC|Stack|Goexit|SetFinalizer|Breakpoint|LockOSThread)(\(\))?$"),
    # The test binary runs on one processor with no asynchronous preemption (polyglot-go-test;
    # tests that ask for threads run apart, first, in a process of their own: polyglot-go-run),
    # so no data race can tear a value into a pointer; GOMAXPROCS would run the solution's
    # goroutines in parallel again.
    ("parallelism", INTROSPECTION, NAME, r"^runtime\.GOMAXPROCS(\(\))?$"),
    # reflect's doors to raw memory, which need no `unsafe` import: an unsafe.Pointer from
    # Value.UnsafePointer/UnsafeAddr, a typed view at any address with reflect.NewAt, a
    # slice/string header to point anywhere (red team 8 read the test binary's function names
    # and tables from a solution file so).
    ("reflect_memory", INTROSPECTION, NAME,
     r"^(reflect\.(NewAt|SliceHeader|StringHeader)(\(\))?|.*\.(UnsafePointer|UnsafeAddr|SetPointer)(\(\))?)$"),
    # Compiler directives: linkname reaches unexported runtime and testing symbols.
    ("directives", INTROSPECTION, DIRECTIVE,
     r"^(go:(linkname|embed|cgo_\w+|nosplit|noescape|uintptrescapes|systemstack|wasmimport|wasmexport)|export\b|line\b)"),
    # `import . "os"` makes Exit a bare name: no policy can follow it.
    ("dot_import", INTROSPECTION, DIRECTIVE, r"^dot_import "),
    ("process_control", PROCESS_CONTROL, NAME,
     r"^(os\.(Exit|Args|Executable|StartProcess|FindProcess|Getpid|Getppid|Environ|Getenv|LookupEnv|Setenv"
     r"|Unsetenv|Clearenv|Chdir)|syscall\.\w+|os/signal\.\w+|log\.(Fatal|Fatalf|Fatalln)|flag\.\w+)(\(\))?$"),
    ("process_modules", PROCESS_CONTROL, IMPORT, r"^(os/exec|os/signal|os/user|syscall|net|net/.*|golang\.org/x/sys/.*)$"),
    # The test binary's own streams (test2json reads its results from stdout: red team 2 swapped
    # os.Stdout for a pipe at init() and rewrote every result line) and new descriptors.
    ("process_streams", PROCESS_CONTROL, NAME, r"^os\.(Stdout|Stderr|Stdin|Pipe|NewFile)(\(\))?$"),
    ("file_access", TEST_SOURCES, NAME,
     r"^(os\.(Open|OpenFile|ReadFile|ReadDir|Readlink|Getwd|Stat|Lstat|DirFS|Create|CreateTemp|WriteFile|Remove"
     r"|RemoveAll|Rename|Mkdir\w*|Truncate|CopyFS|Chmod|Chown|Lchown|Chtimes|Link|Symlink)|io/ioutil\.\w+|path/filepath\.(Glob|Walk|WalkDir|Abs|EvalSymlinks)"
     r"|io/fs\.\w+|embed\.\w+)(\(\))?$"),
    # debug/elf and its kin open and parse a binary (the test binary's .rodata holds a fallback
    # canary's numbers: red team 2).
    ("file_modules", TEST_SOURCES, IMPORT, r"^(io/ioutil|io/fs|embed|path/filepath|debug/.*)$"),
    ("test_source_strings", TEST_SOURCES, STRING, r"(_test\.go|\.test$|/tmp/report|/proc/|/testbed|go-test\.json|test2json)"),
))

# --- the language -----------------------------------------------------------------------

BINARY_DIR = "{report_dir}.binary"  # beside the build's report directory, RUNNER_UID's (mode 0711)

LANGUAGE = LanguageSpec(
    name="go",
    display_name="Go",
    self_check_hint=(
        "Run `go build ./... && go vet ./...`. For behaviour, add a temporary scratch_test.go "
        "with a TestScratch function, run `go test -run TestScratch ./...`, then delete it."
    ),
    canaries=PLANTER,
    image_recipe="go",
    version_command="go version",
    source_policy=SOURCE_POLICY,
    hidden_globs=("**/*_test.go",),
    new_source_globs=("*.go",),
    never_keep_globs=("*_test.go",),
    artifact_globs=COMMON_ARTIFACTS + ("**/*.test", "**/*.out"),
    unskip_globs=(),
    unskip=no_unskip,
    # The build hands the binary over in BINARY_DIR; the binary runs as another uid, which may
    # execute it and never read it (polyglot-go-run). The directory is named here only.
    test_command=f"polyglot-go-test {{report_dir}} {BINARY_DIR}",
    run_command=f"polyglot-go-run {{report_dir}} {BINARY_DIR.replace('report_dir', 'build_report_dir')}",
    parse_results=runner_results.parse_go_test_json,
    # A copy of a table-ranging test over one changed entry (docs/variants-go.md).
    variants=go_variants.DERIVER,
    # go test runs only *_test.go files, hidden files a patch cannot add (a TestX in a
    # solution file, as in go__counter's reference, is an ordinary function); the report
    # names only the package.
    test_file=origin_unknown,
    suspicious=(
        ("early_exit", r"\bos\.Exit\("),
        ("early_exit", r"\bsyscall\.Exit\("),
        ("runner_output", r"--- PASS"),
        ("runner_output", r"=== RUN"),
        ("test_framework", r"_test\.go\b"),
        ("runner_internals", r"os\.Args\[0\]"),
    ),
)
