"""The language registry: one module per language, listed here.

Adding a language is adding one module beside these (a `LanguageSpec` named `LANGUAGE`,
built as utils/languages/spec.py describes), its image recipe under `docker/<name>/`, and
its name to `_MODULES`; or, from outside the package (a test, a host repository),
`register(language)`. Everything else (dataset preparation, agent runs, grading, reports,
the tests) reads the registry.
"""

from __future__ import annotations

import functools
import importlib

from ..judging.patches import GENERIC_SUSPICIOUS, SuspiciousPatterns
from .spec import (BuildCache, ExerciseNameError, ExerciseNameLine, LanguageSpec, TrustedProcess, gitignore_line,
                   matches_any, path_matches)

__all__ = ["LANGUAGES", "BuildCache", "ExerciseNameError", "ExerciseNameLine", "LanguageExistsError", "LanguageSpec",
           "TrustedProcess", "UnknownLanguageError", "get_language", "gitignore_line", "matches_any", "path_matches", "register",
           "suspicious_patterns", "unregister"]

# In the order runs, images and reports list them.
_MODULES = ("python", "go", "rust", "javascript", "java", "cpp")

LANGUAGES: dict[str, LanguageSpec] = {}


class UnknownLanguageError(ValueError):
    pass


class LanguageExistsError(ValueError):
    """A language of that name is registered already."""


def register(language: LanguageSpec, replace: bool = False) -> LanguageSpec:
    """Add `language` to the registry (LanguageExistsError when its name is taken, unless
    `replace`); returns it."""
    if language.name in LANGUAGES and not replace:
        raise LanguageExistsError(f"language {language.name!r} is registered already")
    LANGUAGES[language.name] = language
    suspicious_patterns.cache_clear()
    return language


def unregister(name: str) -> None:
    """Remove a language `register` added (a throwaway test language)."""
    get_language(name)
    del LANGUAGES[name]
    suspicious_patterns.cache_clear()


def get_language(name: str) -> LanguageSpec:
    try:
        return LANGUAGES[name]
    except KeyError:
        raise UnknownLanguageError(
            f"unknown language {name!r}; known: {', '.join(sorted(LANGUAGES))}"
        ) from None


@functools.lru_cache(maxsize=1)
def suspicious_patterns() -> SuspiciousPatterns:
    """The suspicious-line patterns a kept patch is audited with: the generic ones and every
    registered language's. All of them, not only the instance's language's: a line that
    prints another runner's summary or names another runner's flag is as worth a look, and
    the audit never changes a verdict."""
    return SuspiciousPatterns.of(GENERIC_SUSPICIOUS + tuple(fragment for language in LANGUAGES.values()
                                                            for fragment in language.suspicious))


for _name in _MODULES:
    register(importlib.import_module(f".{_name}", __name__).LANGUAGE)
