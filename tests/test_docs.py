"""The documentation points at things that exist: every relative link of README.md and docs/*.md
reaches a file (and, with a `#fragment`, a heading of it), and every path of this checkout that
the mechanism table (docs/mechanisms.md) or a page names exists. No Docker; milliseconds."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([PROJECT_ROOT / "README.md", *(PROJECT_ROOT / "docs").glob("*.md")])
MECHANISMS = PROJECT_ROOT / "docs" / "mechanisms.md"

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
# A path of this checkout as the docs write it: a top folder of ours, then the rest.
_OUR_PATH = re.compile(r"^(?:utils|tests|docker|bench)/[\w./<>*{},-]+$")
# Outside the mechanism table only file names are checked: the pages also quote an exercise's
# own folders (Rust's `tests/`, `tests/invalid/`), which are not ours.
_OUR_FILE = re.compile(r"^(?:utils|tests|docker|bench)/[\w./<>*{},-]*\.(?:py|c|java|sh|md|txt|json)$")


def _prose(page: Path) -> str:
    """The page without its fenced code blocks (commands, examples: not links, not headings)."""
    return _FENCE.sub("", page.read_text())


def github_anchor(heading: str) -> str:
    """The fragment GitHub gives a heading: lower case, punctuation but `-` and `_` dropped,
    spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    names: set[str] = set()
    for line in _prose(page).splitlines():
        if line.startswith("#"):
            names.add(github_anchor(line.lstrip("#")))
    return names


def code_spans(page: Path) -> list[str]:
    """The text of every code span (`x`, ``x `y` z``) of the page's prose."""
    return [span for _, span in _CODE_SPAN.findall(_prose(page))]


def relative_links(page: Path) -> list[str]:
    return [target for target in _LINK.findall(_prose(page)) if not re.match(r"^[a-z]+:", target)]


def expand(path: str) -> list[str]:
    """`{a,b}` as both names, `<lang>` as any name: the globs a path written in the docs stands for."""
    braces = re.search(r"\{([^}]*)\}", path)
    if braces:
        return [expanded for choice in braces.group(1).split(",")
                for expanded in expand(path[:braces.start()] + choice + path[braces.end():])]
    return [re.sub(r"<[^>]*>", "*", path)]


def missing_paths(page: Path, pattern: re.Pattern) -> list[str]:
    named = [span.strip().split(" ")[0] for span in code_spans(page)]
    return [path for path in named if pattern.match(path)
            and not all(any(PROJECT_ROOT.glob(glob.rstrip("/"))) for glob in expand(path))]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(PROJECT_ROOT).as_posix())
def test_every_relative_link_reaches_a_file_and_heading(page: Path):
    broken = []
    for target in relative_links(page):
        path, _, fragment = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(target)
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(target)
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(PROJECT_ROOT).as_posix())
def test_every_file_a_page_names_exists(page: Path):
    assert missing_paths(page, _OUR_FILE) == []


def test_every_path_of_the_mechanism_table_exists():
    named = [span for span in code_spans(MECHANISMS) if _OUR_PATH.match(span)]
    assert len(named) > 40  # the table is read, not skipped
    assert missing_paths(MECHANISMS, _OUR_PATH) == []


def test_the_mechanism_table_covers_every_mechanism():
    table = MECHANISMS.read_text()
    for mechanism in ("canaries", "trusted test process", "source policy", "hidden tests gone", "solo build",
                      "no exec", "regular files only", "containment", "shared nothing"):
        assert f"[{mechanism}" in table, mechanism


def test_the_readme_is_the_front_door():
    readme = (PROJECT_ROOT / "README.md").read_text().splitlines()
    assert len(readme) <= 200
    assert readme[3:5] == ["./run_demo.sh    # set-up (packages, Docker engine, the language images) + oracle run on"
                           " the bundled samples + report",
                           "./run_tests.sh   # the test suite (CI runs exactly this)"]


def test_the_checker_sees_a_broken_link_and_a_missing_path(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text("[gone](nowhere.md) [here](page.md#no-such-heading) `tests/test_no_such_file.py`\n# A heading\n")
    assert relative_links(page) == ["nowhere.md", "page.md#no-such-heading"]
    assert "no-such-heading" not in anchors(page) and "a-heading" in anchors(page)
    assert missing_paths(page, _OUR_FILE) == ["tests/test_no_such_file.py"]
