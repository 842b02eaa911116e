"""The Ray backend (`--backend ray`): a sandbox is a Ray actor on a node of a Ray cluster that
drives one container of that node's own Docker engine (through the Docker backend's public
API). See provider.py for placement, images without a registry, and faults.

Options: `address` (`--ray_address`, or `--backend_option address=HOST:PORT`; default
$POLYGLOT_RAY_ADDRESS, else "auto").
"""

from .provider import RayProvider, RaySandbox, open_provider

__all__ = ["RayProvider", "RaySandbox", "open_provider"]
