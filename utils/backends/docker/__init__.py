"""The Docker backend (`--backend docker`, the default): a sandbox is a container of the
Docker engine the SDK finds (DOCKER_HOST honoured).

    provider.py  sandboxes, the provider, clean-up of runs and of dead owners, run networks
    images.py    content-addressed images: base ▶ common ▶ language (▶ agent layer)
    engine.py    bring-up of a local engine (docker/ensure_engine.sh)

What is imported from this package (not its modules) is its public API: the Ray backend
drives one Docker engine per node through it. Options: none.
"""

from .images import docker_client, ensure_agent_image, ensure_base_image, ensure_language_image
from .provider import (DockerProvider, DockerSandbox, create_run_network, list_run_containers, open_provider,
                       remove_run_containers, remove_run_network, remove_stale_containers, remove_stale_networks)

__all__ = ["DockerProvider", "DockerSandbox", "create_run_network", "docker_client", "ensure_agent_image",
           "ensure_base_image", "ensure_language_image", "list_run_containers", "open_provider",
           "remove_run_containers", "remove_run_network", "remove_stale_containers", "remove_stale_networks"]
