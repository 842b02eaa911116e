"""Wide records are built by name: a dataclass with more than six fields is keyword-only, so a
caller cannot shift one argument into its neighbour's field (read from the AST of every module
under utils/)."""

from __future__ import annotations

import ast
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
WIDEST_POSITIONAL = 6


def _fields(cls: ast.ClassDef) -> list[str]:
    return [s.target.id for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            and "ClassVar" not in ast.unparse(s.annotation)]


def _keyword_only(cls: ast.ClassDef) -> bool:
    return any(isinstance(d, ast.Call) and any(k.arg == "kw_only" and ast.literal_eval(k.value) for k in d.keywords)
               for d in cls.decorator_list)


def wide_positional_records(source: str, where: str) -> list[str]:
    """Every dataclass of `source` with more than six fields that is not keyword-only."""
    return [f"{where}:{cls.lineno} {cls.name} ({len(_fields(cls))} fields)"
            for cls in ast.walk(ast.parse(source)) if isinstance(cls, ast.ClassDef)
            and any("dataclass" in ast.unparse(d) for d in cls.decorator_list)
            and len(_fields(cls)) > WIDEST_POSITIONAL and not _keyword_only(cls)]


def test_every_record_wider_than_six_fields_is_keyword_only():
    found = [hit for path in sorted((PROJECT_ROOT / "utils").rglob("*.py"))
             for hit in wide_positional_records(path.read_text(), str(path.relative_to(PROJECT_ROOT)))]
    assert not found, found


def test_a_wide_positional_record_is_reported_and_a_narrow_or_keyword_only_one_is_not():
    fields = "".join(f"    f{i}: int\n" for i in range(7))
    wide = f"from dataclasses import dataclass\n@dataclass(frozen=True)\nclass Wide:\n{fields}"
    assert wide_positional_records(wide, "m.py") == ["m.py:3 Wide (7 fields)"]
    assert wide_positional_records(wide.replace("(frozen=True)", "(frozen=True, kw_only=True)"), "m.py") == []
    narrow = "from dataclasses import dataclass\n@dataclass\nclass Narrow:\n    a: int\n    b: int\n"
    assert wide_positional_records(narrow, "m.py") == []
