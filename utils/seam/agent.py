"""The agent as a backend receives it: prepared on the host (utils/agents/prepare.py) into a
tree a backend builds as a layer over a language image, and the one rule every backend follows
for which image the agent runs in."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

AGENT_DIR_IN_CONTAINER = "/agent"


@dataclass(kw_only=True, frozen=True)
class PreparedAgent:
    name: str            # oracle | null | the agent directory | <layout>:<host repository>
    tree: Path | None    # the patched copy (None for built-in agents)
    agent_hash: str
    warnings: tuple[str, ...] = ()
    entry_point: str = "run_task_agent.py"  # run from the tree with the contract's arguments
    passes_model: bool = True               # whether --model is among them
    environment: tuple[str, ...] = ()       # variables passed besides the default list (a layout's)

    @property
    def builtin(self) -> bool:
        return self.tree is None


def agent_images(agent: PreparedAgent | None, language_images: dict[str, str],
                 build_layer: Callable[[str, str], str]) -> dict[str, str]:
    """The agent's image per language, the one rule every backend follows: none without an
    agent; a built-in agent (oracle, null) runs in the language image itself, so it needs no
    layer; any other agent runs in `build_layer(language, language_image)`, the tag of its
    layer over that language's image."""
    if agent is None:
        return {}
    return {language: image if agent.builtin else build_layer(language, image)
            for language, image in language_images.items()}
