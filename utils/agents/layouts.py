"""The task agents of the loops that keep this harness as a folder of their own repository.

HyperAgents (`domains/polyglot/`) and DGM (`polyglot/`) evaluate their own repository's task
agent: their harness copies a fixed list of files from the repository root into the container,
applies the generation's lineage patches there (`patch -p1`, diffs against that repository),
installs its requirements.txt and runs one entry point. A layout is that list, written down
once, so the same agent runs here unchanged (prepare.py prepares it):

- `files`: (path in the host repository, path in the agent tree); missing ones are skipped,
  except the entry point;
- `entry_point`: the script run with the agent contract's arguments (agent/README.md);
- `passes_model`: whether `--model` is among them (DGM's coding_agent.py takes no --model);
- `environment`: the variables that loop passes to its agent, added to the default list.

Which layout runs (docs/usage.md, "Whose agent runs"): `agent_layout` says so; `auto`
picks the layout whose `marker` files the repository at `root_dir` (default: the current
directory) holds, when no `--agent` is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class AgentLayout:
    name: str
    files: tuple[tuple[str, str], ...]
    entry_point: str
    passes_model: bool
    environment: tuple[str, ...]
    markers: tuple[str, ...]

    def found_in(self, root: Path) -> bool:
        return all((root / marker).is_file() for marker in self.markers)

    @property
    def tree_paths(self) -> tuple[str, ...]:
        return tuple(inside for _, inside in self.files)

    def holds(self, path: str) -> bool:
        """Whether a patched file (path relative to the repository root) lies in the layout."""
        return any(path == inside or path.startswith(inside.rstrip("/") + "/") for inside in self.tree_paths)


_MODEL_KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")

HYPERAGENTS = AgentLayout(
    name="hyperagents",
    files=tuple((path, path) for path in ("task_agent.py", "run_task_agent.py", "requirements.txt", "agent",
                                          "utils", "meta_agent.py", "run_meta_agent.py", "README.md")),
    entry_point="run_task_agent.py",
    passes_model=True,
    environment=(*_MODEL_KEYS, "METAGEN_ACCESS_TOKEN"),
    markers=("task_agent.py", "run_task_agent.py"),
)

DGM = AgentLayout(
    name="dgm",
    files=(("coding_agent_polyglot.py", "coding_agent.py"),
           *((path, path) for path in ("requirements.txt", "pytest.ini", "tools", "utils", "tests", "prompts",
                                       "llm.py", "llm_withtools.py"))),
    entry_point="coding_agent.py",
    passes_model=False,
    environment=(*_MODEL_KEYS, "AWS_REGION", "AWS_REGION_NAME", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
    markers=("coding_agent_polyglot.py",),
)

LAYOUTS: dict[str, AgentLayout] = {layout.name: layout for layout in (HYPERAGENTS, DGM)}


def detect_layout(root: Path) -> AgentLayout | None:
    """The layout whose markers `root` holds (DGM first: its repository may also have a
    run_task_agent.py of its own), or None."""
    for layout in (DGM, HYPERAGENTS):
        if layout.found_in(root):
            return layout
    return None
