"""Java: javac and the JUnit Platform console launcher in one JVM (docker/java)."""

from __future__ import annotations

import functools
import re
import unicodedata
from pathlib import Path

from ..judging import runner_results, tree_facts
from ..judging.source_facts import ID, PUNCT, STR, Fact, TokenList, chains, decode_escapes, string_facts
from ..judging.source_policy import (IMPORT, INTROSPECTION, NAME, PROCESS_CONTROL, STRING, TEST_FRAMEWORK,
                                     TEST_SOURCES, SourcePolicy, rules)
from ..judging.canaries import (Assertion, Canary, CanaryError, Leaf, LiteralSyntax, Mutator, Planter, Symbol, brace_scopes,
                                TestUnit, apply_edits, brace_depths, built_point, call_arguments, matching_brace)
from ..judging.regular_files import read_regular, regular_files
from ..judging.runner_results import TestCase
from . import java_signatures, java_variants
from .spec import COMMON_ARTIFACTS, LanguageSpec

# --- un-skip ----------------------------------------------------------------------------

# `@Disabled` or `@Disabled("why")`, not `@DisabledOnOs(...)` and the like (\b + no identifier char).
_DISABLED = r"@Disabled(?![\w$])(?:[ \t]*\((?:[^()\"]|\"(?:[^\"\\]|\\.)*\")*\))?"
_DISABLED_LINE = re.compile(r"^[ \t]*" + _DISABLED + r"[ \t]*\r?\n", re.M)
_DISABLED_INLINE = re.compile(_DISABLED + r"[ \t]*")


def unskip_java(text: str) -> str:
    """Remove every @Disabled annotation (own line or inline), keeping the test. Line breaks
    are never joined, so a commented-out `// @Disabled` cannot swallow the next line."""
    text = _DISABLED_LINE.sub("", text)
    return _DISABLED_INLINE.sub("", text)


# --- where a test is defined ------------------------------------------------------------


def test_class_file(case: TestCase) -> str | None:
    """The test source a JUnit classname names by Java's convention (package path, top-level
    class): a test class a solution adds under src/main/java names a file that is no hidden
    test file. The launcher scans every compiled class, main code's included."""
    top_level = case.origin.split("$", 1)[0]
    return f"src/test/java/{top_level.replace('.', '/')}.java" if top_level else None


# --- guard ------------------------------------------------------------------------------


def guard_java_source(path: str, content: bytes) -> str | None:
    """Exercises live in the default package; a solution file declaring a package could
    shadow a test library class (e.g. org.assertj.core.api.Assertions). Read as javac reads
    it (the policy's lexicon: unicode escapes decoded, comments dropped): `package` is a
    keyword, so any such token is a declaration (`/**/package x;`, `package/**/x;`) or a
    compile error."""
    if not path.endswith(".java"):
        return None
    streams = tree_facts.lex(content.decode("utf-8", errors="replace"), LEXICON).streams
    if any(token.kind == ID and token.text == "package" for toks in streams for token in toks):
        return "declares_a_package"
    return None


# --- canaries ---------------------------------------------------------------------------

_TEST = re.compile(
    r"@Test\b(?!\w)(?P<between>(?:\s*@\w+(?:\([^()]*\))?)*)\s*(?:public\s+)?void\s+(?P<name>\w+)\s*\(\s*\)"
    r"(?:\s*throws\s+[\w.,\s]+?)?\s*\{")


def find_units(text: str) -> list[TestUnit]:
    depths = brace_depths(text)
    units = []
    for match in _TEST.finditer(text):
        before = text[max(text.rfind(";", 0, match.start()), text.rfind("}", 0, match.start()),
                          text.rfind("{", 0, match.start())) + 1:match.start()]
        annotations = before + match["between"]
        if depths(match.start()) != 1 or "Parameterized" in annotations or "Repeated" in annotations:
            continue
        end = matching_brace(text, match.end() - 1)
        units.append(TestUnit(match["name"], match.start(), end))
    return units


def plant_file(text: str, chosen: list[tuple[TestUnit, Canary]]) -> str:
    class_end = text.rstrip().rfind("}")
    if class_end < 0:
        raise CanaryError("no class body")
    edits = []
    for unit, canary in chosen:
        block = text[unit.start:unit.end]
        renamed = re.sub(rf"\bvoid\s+{re.escape(canary.source)}\s*\(", f"void {canary.hidden_name}(", block, count=1)
        edits.append((unit.start, unit.end, renamed))
        edits.append((class_end, class_end, (
            f"\n    @Test\n    public void {canary.source}() throws Throwable {{\n"
            f"        {canary.hidden_name}();\n"
            f"        org.junit.jupiter.api.Assertions.assertEquals({canary.expected}, {canary.actual});\n    }}\n")))
    return apply_edits(text, edits)


def leaf(reported: str) -> Leaf | None:
    head, separator, method = reported.partition("::")
    if not separator or not method.endswith("()"):
        return None
    return Leaf(method[:-2], len(head) + 2)


# AssertJ's isEqualTo message (3.x): `expected: E` then ` but was: A`, each on its line;
# JUnit's assertEquals: `expected: <E> but was: <A>`.
_IS_EQUAL_TO = re.compile(r"\)\s*\.isEqualTo\(")
# A class's named constant (`Winner.PLAYER_X`, an enum's) counts: a canary swaps it for another
# the tests write under that class (issue 32).
_LITERALS = LiteralSyntax("\"", ("false", "true"), re.compile(
    r"\b(?:final[ \t]+)?(?:int|long|String|boolean|var|[A-Z]\w*)[ \t]+(?P<name>\w+)[ \t]*=[ \t]*(?P<value>[^;\n]+?)[ \t]*;"),
    symbols=True)
_IS_TRUE = re.compile(r"\)\s*\.(?P<method>isTrue|isFalse)\(\s*\)")
_ASSERT_EQUALS = re.compile(r"(?<![\w.])(?:Assertions\.)?assertEquals\(")


def assertions(test: str) -> list[Assertion]:
    """A test's mutable assertions: those of an expected literal or constant
    (`exact_assertions`), else those of an expected object built by constructors or calls
    (`built_assertions`): tests that had a mutable assertion keep the same one."""
    return exact_assertions(test) or built_assertions(test)


def exact_assertions(test: str) -> list[Assertion]:
    """`assertThat(x).isEqualTo(LITERAL)` and `assertEquals(LITERAL, x)`."""
    found = []
    for match in _IS_EQUAL_TO.finditer(test):
        spans = call_arguments(test, match.end() - 1, quotes="\"")
        if spans and len(spans) == 1 and re.search(r"\bassertThat\(", test[:match.start()]):
            side = _LITERALS.side(test, spans[0])
            if side is not None:
                found.append(Assertion.at(side, _assertj_failure))
    for match in _IS_TRUE.finditer(test):
        if re.search(r"\bassertThat\(", test[:match.start()]):
            found.append(Assertion(start=match.start("method"), end=match.end("method"), value=match["method"] == "isTrue",
                                   failure=_boolean_failure, written=lambda value: "isTrue" if value else "isFalse"))
    for match in _ASSERT_EQUALS.finditer(test):
        spans = call_arguments(test, match.end() - 1, quotes="\"")
        if spans and len(spans) == 2 and _LITERALS.value(test[slice(*spans[1])]) is None:
            side = _LITERALS.side(test, spans[0])
            if side is not None:
                found.append(Assertion.at(side, _junit_failure))
    return sorted(found, key=lambda assertion: assertion.start)


# AssertJ's isEqualTo message for objects, whatever their toString shows (a string's or an
# object's may span lines: `expected: "Q` / `1"` / ` but was: "A` / `1"`).
_OBJECT_FAILURE = r"^expected: [^\n]*(?:\n(?! but was: )[^\n]*)*\n but was: "


def built_assertions(test: str) -> list[Assertion]:
    """`assertThat(x).isEqualTo(E)`, E built by calls (`new Rational(7, 6)`), or a local
    built so (`Rational expected = new Rational(7, 6);`, a map filled by
    `expectedLocations.put("clojure", Optional.of(new WordLocation(new Pair(1, 1), ..)))`):
    its first integer (else string) literal, so a class whose equals() always holds passes
    the copy and a correct one fails it (issue 32). The message is checked for AssertJ's
    format only; preparation keeps a canary only when the reference fails it so."""
    found = []
    for match in _IS_EQUAL_TO.finditer(test):
        spans = call_arguments(test, match.end() - 1, quotes="\"")
        if not (spans and len(spans) == 1 and re.search(r"\bassertThat\(", test[:match.start()])):
            continue
        points = [point for span in _expected_parts(test, spans[0], match.start())
                  if (point := built_point(test, span, prefer=int, inside_strings=True)) is not None]
        point = next((point for point in points if isinstance(point[2], int)), points[0] if points else None)
        if point is not None:
            # A run of text inside a string literal (a verse of `"..\n" + ..`) is written raw.
            raw = isinstance(point[2], str) and test[point[0]] != '"'
            found.append(Assertion.at(point, lambda new: _OBJECT_FAILURE, built=True,
                                      written=(lambda new: str(new)) if raw else None))
    return sorted(found, key=lambda assertion: assertion.start)


def _expected_parts(test: str, span: tuple[int, int], before: int) -> list[tuple[int, int]]:
    """Where an expected side's value is built: the side itself, or for a local its
    initialiser and the arguments of the calls on it before the assertion (`x.put(..)`)."""
    name = test[span[0]:span[1]]
    if not re.fullmatch(r"[a-z_]\w*", name):
        return [span]
    binding = re.search(rf"(?<![\w.])[A-Z][\w<>\[\], ?]*\s+{name}\s*=\s*", test[:before])
    if binding is None:
        return []
    parts = []
    value = call_arguments("(" + test[binding.end():before].split(";", 1)[0] + ")", 0, quotes="\"")
    if value and len(value) == 1:
        parts.append((binding.end() + value[0][0] - 1, binding.end() + value[0][1] - 1))
    for call in re.finditer(rf"^[ \t]*{name}\.\w+\(", test[:before], re.M):
        arguments = call_arguments(test, call.end() - 1, quotes="\"")
        parts += arguments or []
    return parts


def _assertj_failure(value: int | str | bool | Symbol) -> str:
    """AssertJ shows an enum constant by its name (its toString, unless overridden: then the
    canary misbehaves on the reference and is never recorded)."""
    shown = value.name if isinstance(value, Symbol) else literal(value)
    return f"^expected: {re.escape(shown)}\n but was: .*$"


def _boolean_failure(value: int | str | bool) -> str:
    """AssertJ's isTrue()/isFalse() failure (ShouldBeTrue/ShouldBeFalse; older: isEqualTo's)."""
    shown = "true" if value else "false"
    return f"^(?:Expecting value to be {shown} but was {'false' if value else 'true'}|expected: {shown})$"


def _junit_failure(value: int | str | bool | Symbol) -> str:
    shown = value if isinstance(value, str) else value.name if isinstance(value, Symbol) else literal(value)
    return f"expected: <{re.escape(shown)}> but was: <.*>"


def literal(value: int | str | bool | Symbol) -> str:
    if isinstance(value, Symbol):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


def rename(test: str, name: str, new_name: str) -> str:
    return re.sub(rf"\bvoid\s+{re.escape(name)}\s*\(", f"void {new_name}(", test, count=1)


# --- the stub's signatures, pinned (utils/languages/java_signatures.py) --------------------

def _java_sources(root: Path) -> list[str]:
    return [read_regular(root, relative).decode("utf-8", errors="replace")
            for relative in sorted(regular_files(root)) if relative.startswith("src/main/java/") and relative.endswith(".java")]


def pin_signatures(tree: Path, test_tree: Path, reference_dir: Path | None,
                   hidden_paths: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Write the probe class of the stub methods the reference shares among the hidden test
    sources (a hidden file like them: gone before the tests run); the pinned paths, and the
    names the probe resolves that the solution's own types take over (then nothing is run)."""
    if reference_dir is None or not reference_dir.is_dir() or (tree / java_signatures.PROBE_PATH).exists():
        return (), ()
    stubs, references = _java_sources(test_tree), _java_sources(reference_dir)
    taken = java_signatures.conflicts(stubs, references, _java_sources(tree))
    source, pinned = java_signatures.probe_class(stubs, references)
    if pinned:
        (tree / java_signatures.PROBE_PATH).parent.mkdir(parents=True, exist_ok=True)
        (tree / java_signatures.PROBE_PATH).write_text(source, encoding="utf-8")
    return pinned, taken


PLANTER = Planter(file_globs=("src/test/**.java",), name_style="lower_camel", find_units=find_units, plant_file=plant_file, leaf=leaf,
                  mutator=Mutator(assertions, rename, literal), scopes=brace_scopes(),
                  fallback_failure=lambda expected, actual: re.escape(f"expected: <{expected}> but was: <{actual}>"))

# --- the source policy (utils/judging/source_policy.py) ------------------------------------


@functools.cache
def _ignorable() -> re.Pattern[str]:
    """Characters javac ignores inside identifiers (Character.isIdentifierIgnorable: control
    characters that are no white space, and every format character)."""
    formats = "".join(chr(code) for code in range(0x110000) if unicodedata.category(chr(code)) == "Cf")
    return re.compile("[\x00-\x08\x0e-\x1b\x7f-\x9f" + re.escape(formats) + "]")


def as_javac_reads(text: str) -> str:
    """Unicode escapes decoded, then the characters identifiers ignore dropped: `Sys\\u200btem`
    is `System` to javac, two identifiers to the grammar (in a literal's value too: the safe side)."""
    return _ignorable().sub("", unicode_escapes(text))


def unicode_escapes(text: str) -> str:
    """Java source after the \\uXXXX translation javac does before anything else (an escape
    whose backslash is itself escaped stays): `\\u0022` is a quote, `\\u002a/` ends a comment."""
    return re.sub(r"(?<!\\)((?:\\\\)*)\\u+([0-9A-Fa-f]{4})", lambda m: m.group(1) + chr(int(m.group(2), 16)), text)


def string_value(text: str) -> str:
    """A string literal's value; a text block's with its incidental indentation and trailing
    spaces stripped before its escapes are decoded, as javac does (so `src/te\\<newline>    st`
    is `src/test`)."""
    if not text.startswith('"""'):
        return tree_facts.quoted(text)
    lines = tree_facts.between(text).replace("\r\n", "\n").split("\n")[1:]
    margins = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    margin = min(margins + ([len(lines[-1])] if lines and not lines[-1].strip() else []), default=0)
    return decode_escapes("\n".join(line[margin:].rstrip() for line in lines))


# Java as tree-sitter-java lexes it once its unicode escapes are decoded
# (utils/judging/tree_facts.py): strings, text blocks and chars by node type.
LEXICON = tree_facts.Lexicon(language="java", comments=frozenset({"line_comment", "block_comment"}),
                             strings={"string_literal": string_value, "character_literal": tree_facts.quoted},
                             prepare=as_javac_reads)
# System properties an honest solution reads (the line separator); a call naming one is
# read as `System.getProperty("line.separator")`, any other as `System.getProperty()`.
_HARMLESS_PROPERTIES = {"line.separator", "file.separator", "path.separator"}


def java_facts(text: str) -> tuple[Fact, ...]:
    """Names as written (`System.getProperty`, a call marked `()`), imports (each a name too:
    `import static java.lang.System.*` is `java.lang.System.*`), strings (`+` folded)."""
    facts: list[Fact] = []
    for toks in tree_facts.lex(text, LEXICON).streams:
        toks = _without_type_arguments(toks)
        facts += [Fact(NAME, _property_read(toks, name, end), line) for name, line, end in chains(toks)]
        facts += list(string_facts(toks)) + _java_imports(toks)
    return tuple(facts)


def _without_type_arguments(toks: TokenList) -> TokenList:
    """The tokens less a call's explicit type arguments (`System.<String>exit(42)`: javac takes
    them even for a method that is not generic, and they broke the name apart; red team 10)."""
    kept, depth = [], 0
    for index, token in enumerate(toks):
        if token.kind == PUNCT and token.text == "<" and (depth or (index and toks[index - 1].text == ".")):
            depth += 1
        elif depth and token.kind == PUNCT and token.text in (">", ">>", ">>>"):
            depth = max(0, depth - len(token.text))
        elif not depth:
            kept.append(token)
    return TokenList(kept)


def _property_read(toks: TokenList, name: str, end: int) -> str:
    """`System.getProperty("line.separator")` spelled out: a harmless property's read."""
    if name.removesuffix("()").endswith("getProperty") and end + 3 < len(toks) and toks[end + 2].kind == STR \
            and toks[end + 2].text in _HARMLESS_PROPERTIES and toks[end + 3].text == ")":
        return f'{name.removesuffix("()")}("{toks[end + 2].text}")'
    return name


def _java_imports(toks: TokenList) -> list[Fact]:
    facts = []
    for index, token in enumerate(toks):
        if token.kind == ID and token.text == "import" and (not index or toks[index - 1].text in (";", "}")):
            end = index + 1
            while end < len(toks) and toks[end].text != ";":
                end += 1
            path = "".join(t.text for t in toks[index + 1:end] if t.text != "static")
            facts += [Fact(IMPORT, path, token.line), Fact(NAME, path, token.line)]  # `System.*` too
    return facts


SOURCE_POLICY = SourcePolicy((".java",), java_facts, rules(
    ("junit", TEST_FRAMEWORK, NAME, r"^(org\.(junit|assertj|opentest4j|apiguardian|mockito)|junit)\b"),
    ("junit_imports", TEST_FRAMEWORK, IMPORT, r"^(org\.(junit|assertj|opentest4j|apiguardian|mockito)|junit)\b"),
    ("reflection", INTROSPECTION, NAME,
     r"(^|\.)(setAccessible|trySetAccessible|getDeclaredField|getDeclaredFields|getDeclaredMethod"
     r"|getDeclaredMethods|getDeclaredConstructor|getDeclaredConstructors|forName|privateLookupIn|defineClass"
     r"|defineHiddenClass|getClassLoader|getSystemClassLoader|getContextClassLoader|loadClass|getAllStackTraces"
     r"|getStackTrace|StackWalker|Unsafe|MethodHandles|ServiceLoader|getMethod|getMethods|getField|getFields"
     r"|getConstructor|getConstructors|invoke|invokeExact|newInstance)(\(\))?$"
     r"|(^|\.)(java\.lang\.(reflect|invoke|instrument|management)|sun\.|jdk\.internal|javax\.script|com\.sun\.)"),
    # Also the members only System and Runtime have, called through any expression of their
    # type (`System none = null; none.getenv("HOME")`, `((Runtime) null).getRuntime()`: red team 10).
    ("process_control", PROCESS_CONTROL, NAME,
     r"(^|\.)(System(\.|::)(exit|setOut|setErr|setIn|getProperty|getProperties|setProperty|clearProperty|getenv"
     r"|setSecurityManager|console|load|loadLibrary|\*)|Runtime(\.|::)(getRuntime|halt|exit|\*)|ProcessBuilder"
     r"|ProcessHandle|addShutdownHook|halt|getenv|getRuntime|setSecurityManager|loadLibrary|setOut|setErr|setIn"
     r"|getProperties|setProperty|clearProperty)(\(\))?$"),
    ("file_access", TEST_SOURCES, NAME,
     r"(^|\.)(java\.io\.(File|FileReader|FileInputStream|RandomAccessFile|FileWriter|FileOutputStream)"
     r"|java\.nio\.(file|channels)|Files|Paths|FileReader|FileInputStream|RandomAccessFile|FileWriter"
     r"|FileOutputStream|File|Path\.of|java\.net\.(URL|URI)|URL|URI|openStream|openConnection|toURL)(\.|\(\)$|$)"),
    ("test_source_strings", TEST_SOURCES, STRING,
     r"(src/test|Test\.java|\.java$|TEST-|junit|/tmp/report|/proc/|/testbed|sun\.java\.command|test-results)"),
))

# --- the language -----------------------------------------------------------------------

LANGUAGE = LanguageSpec(
    name="java",
    display_name="Java",
    self_check_hint=(
        "Compile with `javac -d /tmp/classes $(find src/main/java -name '*.java')`; for behaviour, "
        "write a scratch class with a main method in /tmp and run it with "
        "`java -cp /tmp/classes:/tmp/scratch ...`. Gradle may not work offline; don't rely on it."
    ),
    canaries=PLANTER,
    variants=java_variants.DERIVER,
    image_recipe="java",
    version_command="javac -version",
    source_policy=SOURCE_POLICY,
    hidden_globs=("src/test/**",),
    new_source_globs=("src/main/java/*.java",),
    never_keep_globs=(),
    artifact_globs=COMMON_ARTIFACTS + ("build/**", ".gradle/**", "bin/**", "out/**", "**/*.class"),
    unskip_globs=("src/test/**.java",),
    unskip=unskip_java,
    test_command="polyglot-java-test {report_dir}",
    pin_signatures=pin_signatures,
    signature_marker=java_signatures.PROBE_MARKER,
    parse_results=runner_results.parse_junit_reports,
    test_file=test_class_file,
    guard=guard_java_source,
    # A class-data-sharing archive of the grading runner (javac + the JUnit launcher in one JVM),
    # dumped at image build on a warm-up exercise of our own (docker/java/polyglot-java-cds):
    # JVM start-up, not results.
    image_cache_env=(("POLYGLOT_JAVA_CDS", "/opt/java-cds"),),
    suspicious=(
        ("early_exit", r"\bSystem\.exit\("),
        ("runner_output", r"Tests successful"),
        ("test_framework", r"\bjunit\b"),
        ("test_framework", r"org\.assertj"),
        ("runner_internals", r"\bProcessHandle\b"),
        ("runner_internals", r"addShutdownHook"),
        ("runner_internals", r"\.halt\("),
        ("runner_internals", r"--reports-dir"),
        ("runner_internals", r"src/test"),
    ),
)
