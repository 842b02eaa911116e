"""The agent, prepared on the host for its layer (a backend builds it over a language image).

1. The agent directory is copied on the host; `--model_patch_paths` patches are applied to
   the copy in order (HyperAgents' lineage semantics). A hunk whose file lies outside the
   agent tree is dropped with a warning; a patch that does not apply raises
   AgentPatchError naming the patch and the file. Input patch files are only read.
   A host loop's task agent (layouts.py: HyperAgents, DGM) is prepared the
   same way from the files its layout names in the host repository; its lineage patches are
   diffs against that repository (-p1), and a hunk for a file outside the layout (the loop's
   own code, the harness folder: an agent must not edit its evaluator) is left out with one
   warning, never failing the run.
2. The tag is a content hash of (language image id, agent tree, patches). Its Dockerfile
   installs requirements.txt in a layer of its own BEFORE copying the code, so a code-only
   change reuses the engine's cached pip layer and rebuilds in seconds.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from ..judging.patches import copied_or_renamed_entries, is_plain_name, plain_diff, renders
from ..judging.regular_files import irregular_entries, irregular_patch_entries
from ..seam.agent import PreparedAgent
from ..seam.tree_hash import tree_hash
from .layouts import AgentLayout

BUILTIN_AGENTS = ("oracle", "null")
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".git", ".mypy_cache")


class AgentPatchError(ValueError):
    """A --model_patch_paths patch is unreadable or does not apply to the agent."""


def prepare_agent(agent: str, patch_paths: list[Path], workdir: Path) -> PreparedAgent:
    if agent in BUILTIN_AGENTS:
        if patch_paths:
            raise AgentPatchError(f"--model_patch_paths cannot be applied to the built-in {agent} agent")
        return PreparedAgent(name=agent, tree=None, agent_hash=agent)
    source = Path(agent)
    if not (source / "run_task_agent.py").is_file():
        raise AgentPatchError(f"agent directory {source} has no run_task_agent.py")
    tree = workdir / "agent"
    warnings = _links_left_out(_copy_item(source, tree))
    if not (tree / "requirements.txt").exists():
        (tree / "requirements.txt").write_text("")
    for patch_path in patch_paths:
        warnings += _apply_lineage_patch(tree, patch_path)
    _check_regular(tree)
    return PreparedAgent(name=str(source), tree=tree, agent_hash=tree_hash(tree)[:16], warnings=tuple(warnings))


def prepare_layout_agent(layout: AgentLayout, root: Path, patch_paths: list[Path], workdir: Path) -> PreparedAgent:
    """The task agent of the host repository at `root`, copied as `layout` lays it out, with
    the lineage patches applied to the copy (hunks outside the layout left out, one warning each)."""
    entry_source = next(source for source, inside in layout.files if inside == layout.entry_point)
    if not (root / entry_source).is_file():
        raise AgentPatchError(f"{root} holds no {entry_source}: not a {layout.name} repository (agent_layout "
                              f"{layout.name}, root_dir {root})")
    tree = workdir / "agent"
    tree.mkdir(parents=True)
    left_out: list[str] = []
    for source, inside in layout.files:
        left_out += _copy_item(root / source, tree / inside)
    if not (tree / "requirements.txt").exists():
        (tree / "requirements.txt").write_text("")
    warnings = _links_left_out(left_out)
    for patch_path in patch_paths:
        warnings += _apply_layout_patch(tree, patch_path, layout)
    _check_regular(tree)
    return PreparedAgent(name=f"{layout.name}:{root}", tree=tree, agent_hash=tree_hash(tree)[:16], warnings=tuple(warnings), entry_point=layout.entry_point,
                         passes_model=layout.passes_model, environment=layout.environment)


def _copy_item(source: Path, destination: Path) -> list[str]:
    """Copy `source` (a file or a directory) to `destination`, regular files and directories
    only: a link is left out (returned), never followed."""
    if source.is_symlink():
        return [source.as_posix()]
    if source.is_dir():
        left_out: list[str] = []
        shutil.copytree(source, destination, ignore=_ignoring_links(left_out))
        return left_out
    if source.is_file():
        shutil.copy2(source, destination)
    return []


def _ignoring_links(left_out: list[str]):
    """copytree's `ignore`: _IGNORED, plus every link and special file (recorded in `left_out`)."""
    def ignore(directory: str, names: list[str]) -> set[str]:
        ignored = set(_IGNORED(directory, names))
        for name in names:
            entry = Path(directory) / name
            if name not in ignored and (entry.is_symlink() or not (entry.is_file() or entry.is_dir())):
                ignored.add(name)
                left_out.append(entry.as_posix())
        return ignored
    return ignore


def _links_left_out(left_out: list[str]) -> list[str]:
    return [f"left out {path}: not a regular file (an agent's tree holds regular files and directories only)"
            for path in left_out]


def _check_regular(tree: Path) -> None:
    irregular = irregular_entries(tree)
    if irregular:
        raise AgentPatchError(f"the prepared agent holds entries that are not regular files: {', '.join(irregular[:5])}")


def _apply_layout_patch(tree: Path, patch_path: Path, layout: AgentLayout) -> list[str]:
    text, patch = _read_patch(patch_path)
    warnings = _unsafe_entry_warnings(patch_path, text)
    kept = [patched for patched in patch
            if layout.holds(patched.path) and is_plain_name(patched.path) and _is_regular_entry(patched)]
    left_out = sorted({patched.path for patched in patch if _is_regular_entry(patched)}
                      - {patched.path for patched in kept})
    if kept:
        warnings += _git_apply(tree, patch_path, kept, "-p1")
    if left_out:
        warnings.append(f"{patch_path}: left out the hunks for {', '.join(left_out)} (outside the {layout.name} "
                        f"agent's files)")
    return warnings


def _is_regular_entry(patched_file) -> bool:
    return not irregular_patch_entries(str(patched_file))


def _unsafe_entry_warnings(patch_path: Path, text: str) -> list[str]:
    """One warning per entry that is not a regular file (a symlink would put whatever host file
    it names into the agent's image) or that copies or renames (a copy's source may be any host
    file): such entries are left out, the rest applied as content only (patches.plain_diff)."""
    return ([f"{patch_path}: left out {entry}: an agent's tree holds regular files only"
             for entry in irregular_patch_entries(text)]
            + [f"{patch_path}: left out {entry}'s copy/rename header: only content changes apply"
               for entry in copied_or_renamed_entries(text)])


def _read_patch(patch_path: Path) -> tuple[str, PatchSet]:
    try:
        text = patch_path.read_text(encoding="utf-8")
        patch = PatchSet(text)
    except (OSError, UnicodeDecodeError, UnidiffParseError) as error:
        raise AgentPatchError(f"{patch_path}: not a readable unified diff ({error})") from error
    if not len(patch):
        # A broken loop would otherwise evaluate the parent generation as if it were the child.
        raise AgentPatchError(f"{patch_path} holds no diff: nothing to apply to the agent")
    return text, patch


def _apply_lineage_patch(tree: Path, patch_path: Path) -> list[str]:
    text, patch = _read_patch(patch_path)
    kept: list = []
    # A diff taken at this project's root names agent files as agent/...; then every other
    # file is outside the agent tree. A diff taken inside the agent directory names them bare.
    rooted = any(patched_file.path.startswith("agent/") for patched_file in patch)
    warnings = _unsafe_entry_warnings(patch_path, text)
    for patched_file in patch:
        path = patched_file.path
        if not _is_regular_entry(patched_file):
            continue
        if not is_plain_name(path) or (rooted and not path.startswith("agent/")):
            warnings.append(f"{patch_path}: dropped hunks for {path} (outside the agent tree)")
            continue
        kept.append(patched_file)
    if not kept:
        raise AgentPatchError(f"{patch_path} holds no change for the agent: every file it touches is outside "
                              f"the agent tree")
    return warnings + _git_apply(tree, patch_path, kept, "-p2" if rooted else "-p1")


def _git_apply(tree: Path, patch_path: Path, kept: list, strip: str) -> list[str]:
    """The kept file diffs applied to `tree` as content only (patches.plain_diff: no header is
    obeyed) from a temporary file (the input is only read); warnings for what could not be."""
    text = plain_diff(kept)
    unrendered = [patched.path for patched in kept if not renders(patched)]
    warnings = [f"{patch_path}: left out {path}: no text change to apply (binary, empty, or two names)"
                for path in unrendered]
    if not text:
        return warnings
    with tempfile.NamedTemporaryFile("w", suffix=".diff", delete=False) as handle:
        handle.write(text)
        filtered = handle.name
    try:
        completed = subprocess.run(["git", "apply", "--whitespace=nowarn", strip, filtered], cwd=tree,
                                   capture_output=True, text=True,
                                   env={"PATH": "/usr/bin:/bin", "GIT_CEILING_DIRECTORIES": str(tree.parent)})
    finally:
        Path(filtered).unlink(missing_ok=True)
    if completed.returncode != 0:
        detail = (completed.stderr or completed.stdout).strip().splitlines()
        raise AgentPatchError(f"{patch_path} does not apply to the agent: {detail[0] if detail else 'git apply failed'}")
    return warnings
