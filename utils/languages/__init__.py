"""One declarative spec per language: the only place a language is described.

Adding a language means adding one `LanguageSpec` below and one image recipe under
`docker/<name>/`. Everything else (dataset preparation, agent runs, grading, reports)
reads these specs.

Path patterns are POSIX globs relative to the exercise root, matched with
`path_matches` (`**` spans directories, `*` does not cross `/`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable

from ..judging import canaries, runner_results
from ..judging.runner_results import TestResults

# Where grading writes the runner's machine-readable report inside the container. The
# directory name gets a per-run random suffix so code under test cannot guess it.
REPORT_DIR_PLACEHOLDER = "{report_dir}"


def path_matches(path: str, pattern: str) -> bool:
    """Glob match where `*` stays inside one path segment and `**/` spans any depth."""
    return _glob_regex(pattern).fullmatch(path) is not None


@functools.lru_cache(maxsize=None)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(_glob_to_regex(pattern))


def _glob_to_regex(pattern: str) -> str:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def matches_any(path: str, patterns: tuple[str, ...]) -> bool:
    return any(path_matches(path, pattern) for pattern in patterns)


def _no_guard(path: str, content: bytes) -> str | None:
    return None


@dataclass(frozen=True)
class BuildCache:
    """A compiler cache shared by grading containers through a named volume. Only trusted
    code writes it: `warm_command` runs on the pristine test-commit tree (no patch) with the
    volume read-write; every container that runs code under test mounts it read-only."""
    mount_path: str
    # Test-tree files whose content (plus the image) decides whether a warm-up is due.
    key_globs: tuple[str, ...]
    warm_command: str  # run in /testbed; "{key}" is replaced by the warm-up key
    reader_env: tuple[tuple[str, str], ...]
    writer_env: tuple[tuple[str, str], ...]


class ExerciseNameError(ValueError):
    """A build file lacks the line that names the exercise after its directory."""


@dataclass(frozen=True)
class ExerciseNameLine:
    """A build file that names the exercise after its directory (C++'s CMakeLists.txt).

    In a container the directory is /testbed, not the slug, so preparation writes the name
    in (`named`); a build-cache key leaves the written name out (`unnamed`): it does not
    change what a shared compile produces. Every exercise of the language must have the file.
    """
    path: str
    # Regex of the line that takes the name from the directory, and how messages show it.
    from_directory: str
    shown_as: str
    # The line that replaces it; "{slug}" stands for the exercise's slug.
    explicit: str

    def named(self, slug: str, text: str) -> str:
        """`text` with the directory-derived name replaced by `slug`; ExerciseNameError
        when there is no such line."""
        line = self.explicit.format(slug=slug)
        rewritten, count = re.subn(self.from_directory, lambda _: line, text)
        if count == 0:
            raise ExerciseNameError(
                f"{self.path} has no `{self.shown_as}` line to replace with an explicit exercise name")
        return rewritten

    def unnamed(self, content: bytes) -> bytes:
        """`content` without its explicit name lines, whatever the slug."""
        prefix = self.explicit.partition("{slug}")[0].strip().encode()
        return b"\n".join(line for line in content.splitlines() if not line.strip().startswith(prefix))


@dataclass(frozen=True)
class LanguageSpec:
    name: str
    # --- image -----------------------------------------------------------------------
    # Recipe directory under docker/ (Dockerfile + build-context files).
    image_recipe: str
    # A command that prints the toolchain version (used to verify the image).
    version_command: str
    # --- what the agent sees ---------------------------------------------------------
    # Exercise files the agent never sees, in addition to everything under .meta/ and the
    # files .meta/config.json lists under "test" and "example". ("invalidator" files are
    # build files the agent needs to build the stub, so they stay visible.)
    hidden_globs: tuple[str, ...]
    # New files the agent may add that grading keeps (non-test source files).
    new_source_globs: tuple[str, ...]
    # New files never taken from a patch even when they look like source: they could change
    # how tests are collected, configured or built.
    never_keep_globs: tuple[str, ...]
    # Build artifacts never included in a model patch.
    artifact_globs: tuple[str, ...]
    # --- grading ---------------------------------------------------------------------
    # Files (globs) the un-skip transformation rewrites in the grading tree.
    unskip_globs: tuple[str, ...]
    unskip: Callable[[str], str]
    # Shell script run in the grading tree (cwd = repo root), network off. It must write
    # the runner's machine-readable report into {report_dir}.
    test_command: str
    # Reads the report directory (a mapping of file name -> content) into results.
    parse_results: Callable[[dict[str, str]], TestResults]
    # Reference-only manifest overrides for the oracle: (source in exercise, destination).
    reference_overrides: tuple[tuple[str, str], ...] = ()
    # Checked on every file grading takes from a patch, after application: a reason string
    # means the file is restored to its pristine state and recorded as tamper.
    guard: Callable[[str, bytes], str | None] = _no_guard
    build_cache: BuildCache | None = None
    # Environment that turns on a cache baked into the image (built from no exercise at all),
    # set in grading containers only: each container writes to its own copy-on-write layer,
    # so what code under test writes there no other grading sees.
    image_cache_env: tuple[tuple[str, str], ...] = ()
    # How canary tests are planted into this language's test files (utils/canaries.py).
    canaries: canaries.Planter | None = None
    # A build file preparation must name the exercise in (see ExerciseNameLine).
    exercise_name_line: ExerciseNameLine | None = None

    def is_hidden(self, path: str) -> bool:
        return path.startswith(".meta/") or matches_any(path, self.hidden_globs)

    def is_artifact(self, path: str) -> bool:
        return matches_any(path, self.artifact_globs)

    def unskip_text(self, path: str, text: str) -> str:
        if matches_any(path, self.unskip_globs):
            return self.unskip(text)
        return text

    def cache_key_content(self, path: str, content: bytes) -> bytes:
        """What of a test-tree file decides a build-cache warm-up: its content, less the
        exercise's name."""
        if self.exercise_name_line is not None and path == self.exercise_name_line.path:
            return self.exercise_name_line.unnamed(content)
        return content


def _identity(text: str) -> str:
    return text


# `@Disabled` or `@Disabled("why")`, not `@DisabledOnOs(...)` and the like (\b + no identifier char).
_DISABLED = r"@Disabled(?![\w$])(?:[ \t]*\((?:[^()\"]|\"(?:[^\"\\]|\\.)*\")*\))?"
_JAVA_DISABLED = re.compile(r"^[ \t]*" + _DISABLED + r"[ \t]*\r?\n", re.M)
_JAVA_DISABLED_INLINE = re.compile(_DISABLED + r"[ \t]*")


def unskip_java(text: str) -> str:
    """Remove every @Disabled annotation (own line or inline), keeping the test. Line breaks
    are never joined, so a commented-out `// @Disabled` cannot swallow the next line."""
    text = _JAVA_DISABLED.sub("", text)
    return _JAVA_DISABLED_INLINE.sub("", text)


_JAVA_PACKAGE = re.compile(rb"^\s*package\s+[\w.]+\s*;", re.M)


def guard_java_source(path: str, content: bytes) -> str | None:
    """Exercises live in the default package; a solution file declaring a package could
    shadow a test library class (e.g. org.assertj.core.api.Assertions)."""
    if path.endswith(".java") and _JAVA_PACKAGE.search(content):
        return "declares_a_package"
    return None


# Cargo.toml is a solution file (agents may add crates), but only dependency tables may
# change: targets, build scripts, path/git sources or patches could replace the hidden tests.
_CARGO_ALLOWED_TABLES = {"package", "dependencies", "dev-dependencies", "features"}
_CARGO_FORBIDDEN_PACKAGE_KEYS = {"build", "links", "autotests", "autobins", "autoexamples", "autobenches",
                                 "default-run", "workspace"}


def guard_cargo_manifest(path: str, content: bytes) -> str | None:
    if path != "Cargo.toml":
        return None
    import tomllib

    try:
        manifest = tomllib.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return "unreadable_manifest"
    extra_tables = set(manifest) - _CARGO_ALLOWED_TABLES
    if extra_tables:
        return f"manifest_table:{','.join(sorted(extra_tables))}"
    forbidden = _CARGO_FORBIDDEN_PACKAGE_KEYS & set(manifest.get("package", {}))
    if forbidden:
        return f"manifest_key:{','.join(sorted(forbidden))}"
    for table in ("dependencies", "dev-dependencies"):
        for name, requirement in manifest.get(table, {}).items():
            if isinstance(requirement, dict) and {"path", "git"} & set(requirement):
                return f"manifest_source:{name}"
    return None


_JS_SKIPPED = re.compile(r"\bx(test|it|describe)(\s*(?:\.each\b[^(]*)?\()")


def unskip_javascript(text: str) -> str:
    """xtest( -> test(, xit( -> it(, xdescribe( -> describe(; test.skip stays skipped."""
    return _JS_SKIPPED.sub(r"\1\2", text)


COMMON_ARTIFACTS = (".git/**", "**/.DS_Store")

PYTHON = LanguageSpec(
    name="python",
    canaries=canaries.PYTHON,
    image_recipe="python",
    version_command="python3 -m pytest --version",
    hidden_globs=("**/*_test.py", "**/test_*.py", "**/conftest.py"),
    new_source_globs=("*.py",),
    never_keep_globs=("conftest.py", "setup.py", "sitecustomize.py", "usercustomize.py", "__init__.py"),
    artifact_globs=COMMON_ARTIFACTS + ("**/__pycache__/**", "**/*.pyc", "**/.pytest_cache/**"),
    unskip_globs=(),
    unskip=_identity,
    test_command=(
        "python3 -m pytest -p no:cacheprovider -q -o addopts= -o junit_family=xunit2 "
        "--junitxml={report_dir}/junit.xml"
    ),
    parse_results=runner_results.parse_junit_reports,
)

GO = LanguageSpec(
    name="go",
    canaries=canaries.GO,
    image_recipe="go",
    version_command="go version",
    hidden_globs=("**/*_test.go",),
    new_source_globs=("*.go",),
    never_keep_globs=("*_test.go",),
    artifact_globs=COMMON_ARTIFACTS + ("**/*.test", "**/*.out"),
    unskip_globs=(),
    unskip=_identity,
    test_command="go test -json ./... > {report_dir}/go-test.json",
    parse_results=runner_results.parse_go_test_json,
)

RUST = LanguageSpec(
    name="rust",
    canaries=canaries.RUST,
    image_recipe="rust",
    version_command="cargo --version",
    hidden_globs=("tests/**",),
    new_source_globs=("src/**.rs",),
    never_keep_globs=("build.rs", "src/bin/**", "src/main.rs"),
    artifact_globs=COMMON_ARTIFACTS + ("target/**", "Cargo.lock", "**/*.rs.bk"),
    unskip_globs=(),
    unskip=_identity,  # cargo's --include-ignored runs #[ignore] tests
    test_command="polyglot-rust-test {report_dir}",
    parse_results=runner_results.parse_libtest_logfiles,
    reference_overrides=((".meta/Cargo-example.toml", "Cargo.toml"),),
    guard=guard_cargo_manifest,
    # The exercises' crates (regex, time, rand, num-bigint, ...) compiled at image build into
    # /opt/cargo-target (docker/rust/build-seeds): 6-14 s of dependency builds become cargo
    # "Fresh" hits.
    image_cache_env=(("POLYGLOT_CARGO_TARGET", "/opt/cargo-target"),),
)

JAVASCRIPT = LanguageSpec(
    name="javascript",
    canaries=canaries.JAVASCRIPT,
    image_recipe="javascript",
    version_command="node --version",
    hidden_globs=("**/*.spec.js", "**/*.test.js", "**/__tests__/**"),
    new_source_globs=("*.js", "lib/**.js"),
    never_keep_globs=("*.config.js", "*.config.cjs", "*.config.mjs", "jest.*", "setupTests.js", ".babelrc*"),
    artifact_globs=COMMON_ARTIFACTS + ("node_modules", "node_modules/**", "package-lock.json", "coverage/**"),
    unskip_globs=("**/*.spec.js", "**/*.test.js"),
    unskip=unskip_javascript,
    test_command="polyglot-js-test {report_dir}",
    parse_results=runner_results.parse_jest_json,
)

JAVA = LanguageSpec(
    name="java",
    canaries=canaries.JAVA,
    image_recipe="java",
    version_command="javac -version",
    hidden_globs=("src/test/**",),
    new_source_globs=("src/main/java/*.java",),
    never_keep_globs=(),
    artifact_globs=COMMON_ARTIFACTS + ("build/**", ".gradle/**", "bin/**", "out/**", "**/*.class"),
    unskip_globs=("src/test/**.java",),
    unskip=unskip_java,
    test_command="polyglot-java-test {report_dir}",
    parse_results=runner_results.parse_junit_reports,
    guard=guard_java_source,
    # A class-data-sharing archive of the grading runner (javac + the JUnit launcher in one JVM),
    # dumped at image build on a warm-up exercise of our own (docker/java/polyglot-java-cds):
    # JVM start-up, not results.
    image_cache_env=(("POLYGLOT_JAVA_CDS", "/opt/java-cds"),),
)

CPP = LanguageSpec(
    name="cpp",
    canaries=canaries.CPP,
    image_recipe="cpp",
    version_command="g++ --version",
    hidden_globs=("**/*_test.cpp",),
    new_source_globs=("*.h", "*.hpp", "*.cpp", "*.cc"),
    never_keep_globs=(),
    artifact_globs=COMMON_ARTIFACTS + ("build/**", "CMakeFiles/**", "CMakeCache.txt", "Makefile", "cmake_install.cmake"),
    unskip_globs=(),
    unskip=_identity,  # configured with -DEXERCISM_RUN_ALL_TESTS=1
    test_command="polyglot-cpp-test {report_dir}",
    parse_results=runner_results.parse_junit_reports,
    # Catch's main (test/tests-main.cpp) takes ~9-20 s to compile and is the same in every
    # exercise: compiled once per run into ccache, it is a cache hit everywhere after.
    build_cache=BuildCache(
        mount_path="/var/cache/polyglot-ccache",
        key_globs=("CMakeLists.txt", "test/**"),
        warm_command="polyglot-cpp-warm {key}",
        reader_env=(("CCACHE_DIR", "/var/cache/polyglot-ccache"), ("CCACHE_READONLY", "1"),
                    ("CCACHE_TEMPDIR", "/tmp/ccache-tmp")),
        writer_env=(("CCACHE_DIR", "/var/cache/polyglot-ccache"), ("CCACHE_TEMPDIR", "/tmp/ccache-tmp")),
    ),
    exercise_name_line=ExerciseNameLine(
        path="CMakeLists.txt",
        from_directory=r"get_filename_component\(\s*exercise\s+\$\{CMAKE_CURRENT_SOURCE_DIR\}\s+NAME\s*\)",
        shown_as="get_filename_component(exercise ${CMAKE_CURRENT_SOURCE_DIR} NAME)",
        explicit="set(exercise {slug})",
    ),
)

LANGUAGES: dict[str, LanguageSpec] = {
    spec.name: spec for spec in (PYTHON, GO, RUST, JAVASCRIPT, JAVA, CPP)
}


class UnknownLanguageError(ValueError):
    pass


def get_language(name: str) -> LanguageSpec:
    try:
        return LANGUAGES[name]
    except KeyError:
        raise UnknownLanguageError(
            f"unknown language {name!r}; known: {', '.join(sorted(LANGUAGES))}"
        ) from None
