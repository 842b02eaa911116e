"""How long does preparing a full-size benchmark take?

    python bench/prepare_speed.py [--workers N] [--keep DIR]

Writes a synthetic checkout with the upstream's 225 exercises (cpp 26, go 39, java 47,
javascript 49, python 34, rust 30; file sets and sizes like upstream's, e.g. a 650 kB
catch.hpp per C++ exercise and a Gradle wrapper per Java one) into a temporary
directory, prepares it twice (fresh, then replacing the first output) and prints the
times. `write_synthetic_checkout` is also used by the tests.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Mapping

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

UPSTREAM_COUNTS = {"cpp": 26, "go": 39, "java": 47, "javascript": 49, "python": 34, "rust": 30}

_DOCS = "# Instructions\n\n" + "Solve the exercise as described here. " * 40 + "\n"


def _pseudo_bytes(seed: str, size: int) -> bytes:
    chunks = []
    block = seed.encode()
    while sum(map(len, chunks)) < size:
        block = hashlib.sha256(block).digest()
        chunks.append(block)
    return b"".join(chunks)[:size]


def _code(lines: int, prefix: str) -> str:
    return "".join(f"{prefix} line {number} of generated source text\n" for number in range(lines))


_CATCH_HPP = _code(16000, "// catch")  # ~650 kB, like Catch2's single header
_GRADLE_JAR = _pseudo_bytes("gradle-wrapper.jar", 60_000)
_GRADLEW = "#!/bin/sh\n" + _code(240, "#")


def _exercise_files(language: str, slug: str) -> tuple[dict[str, str | bytes], dict[str, list[str]], set[str]]:
    """(files, config "files" mapping, executable paths) of one synthetic exercise."""
    snake = slug.replace("-", "_")
    camel = "".join(part.title() for part in slug.split("-"))
    if language == "python":
        files = {f"{snake}.py": _code(10, "#"), f"{snake}_test.py": _code(120, "#"),
                 ".meta/example.py": _code(40, "#"), ".meta/tests.toml": _code(30, "#")}
        listed = {"solution": [f"{snake}.py"], "test": [f"{snake}_test.py"], "example": [".meta/example.py"]}
        return files, listed, set()
    if language == "go":
        files = {f"{snake}.go": _code(10, "//"), f"{snake}_test.go": _code(100, "//"),
                 "cases_test.go": _code(200, "//"), "go.mod": f"module {snake}\n\ngo 1.18\n",
                 ".meta/example.go": _code(50, "//")}
        listed = {"solution": [f"{snake}.go"], "test": [f"{snake}_test.go"], "example": [".meta/example.go"]}
        return files, listed, set()
    if language == "rust":
        files = {"src/lib.rs": _code(10, "//"), f"tests/{snake}.rs": _code(150, "//"),
                 "Cargo.toml": f'[package]\nname = "{snake}"\nversion = "0.1.0"\nedition = "2021"\n',
                 ".gitignore": "/target\nCargo.lock\n", ".meta/example.rs": _code(60, "//"),
                 ".meta/Cargo-example.toml": f'[package]\nname = "{snake}"\nversion = "0.1.0"\n'}
        listed = {"solution": ["src/lib.rs", "Cargo.toml"], "test": [f"tests/{snake}.rs"], "example": [".meta/example.rs"]}
        return files, listed, set()
    if language == "javascript":
        files = {f"{slug}.js": _code(10, "//"), f"{slug}.spec.js": _code(150, "//"),
                 ".meta/proof.ci.js": _code(50, "//"), "package.json": "{\n" + _code(50, '  "k": ') + "}\n",
                 "babel.config.js": _code(5, "//"), ".eslintrc": _code(15, "#"), ".npmrc": "audit=false\n",
                 "LICENSE": _code(20, "#")}
        listed = {"solution": [f"{slug}.js"], "test": [f"{slug}.spec.js"], "example": [".meta/proof.ci.js"],
                  "invalidator": ["package.json"]}
        return files, listed, set()
    if language == "java":
        files = {f"src/main/java/{camel}.java": _code(10, "//"), f"src/test/java/{camel}Test.java": _code(150, "//"),
                 f".meta/src/reference/java/{camel}.java": _code(60, "//"), "build.gradle": _code(20, "//"),
                 "gradlew": _GRADLEW, "gradlew.bat": _code(90, "rem"),
                 "gradle/wrapper/gradle-wrapper.jar": _GRADLE_JAR,
                 "gradle/wrapper/gradle-wrapper.properties": _code(7, "#")}
        listed = {"solution": [f"src/main/java/{camel}.java"], "test": [f"src/test/java/{camel}Test.java"],
                  "example": [f".meta/src/reference/java/{camel}.java"], "invalidator": ["build.gradle"]}
        return files, listed, {"gradlew"}
    if language == "cpp":
        cmake = "get_filename_component(exercise ${CMAKE_CURRENT_SOURCE_DIR} NAME)\n" + _code(40, "#")
        files = {f"{snake}.h": _code(10, "//"), f"{snake}.cpp": _code(10, "//"), f"{snake}_test.cpp": _code(150, "//"),
                 "CMakeLists.txt": cmake, "test/catch.hpp": _CATCH_HPP, "test/tests-main.cpp": "// main\n",
                 ".meta/example.h": _code(20, "//"), ".meta/example.cpp": _code(40, "//")}
        listed = {"solution": [f"{snake}.cpp", f"{snake}.h"], "test": [f"{snake}_test.cpp"],
                  "example": [".meta/example.cpp", ".meta/example.h"]}
        return files, listed, set()
    raise ValueError(f"no synthetic exercises for {language}")


def write_synthetic_checkout(root: Path, counts: Mapping[str, int] = UPSTREAM_COUNTS) -> list[str]:
    """Write `counts[language]` exercises per language under `root`; return their ids."""
    instance_ids = []
    for language, count in counts.items():
        for number in range(count):
            slug = f"exercise-{number:03d}"
            write_synthetic_exercise(root, language, slug)
            instance_ids.append(f"{language}__{slug}")
    return instance_ids


def write_synthetic_exercise(root: Path, language: str, slug: str) -> Path:
    directory = root / language / "exercises" / "practice" / slug
    files, listed, executables = _exercise_files(language, slug)
    config = {"authors": ["bench"], "contributors": [], "files": listed, "blurb": f"Synthetic {slug}.",
              "source": "bench/prepare_speed.py"}
    files = {**files, ".docs/instructions.md": _DOCS, ".docs/hints.md": "Hint.\n",
             ".meta/config.json": json.dumps(config, indent=2) + "\n"}
    for path, content in files.items():
        target = directory / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode())
        if path in executables:
            target.chmod(0o755)
    return directory


def main() -> int:
    import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
    from polyglot_harness.utils.prepare.dataset import prepare_dataset

    parser = argparse.ArgumentParser(description="Time prepare_polyglot_dataset on a synthetic 225-exercise checkout.")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--keep", type=Path, help="prepare into this directory and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        checkout = Path(scratch) / "checkout"
        started = time.monotonic()
        write_synthetic_checkout(checkout)
        print(f"synthetic checkout written in {time.monotonic() - started:.2f}s")
        output = args.keep or Path(scratch) / "dataset"
        for label in ("fresh", "replacing"):
            summary = prepare_dataset(checkout, output, workers=args.workers, record_expected=False)
            print(f"{label}: {summary.instance_count} instances in {summary.seconds:.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
