"""The agent's preparation on the host, above the seam: an agent directory, or a host loop's
task agent (HyperAgents', DGM's: layouts.py), copied and patched with its lineage patches
(prepare.py) into the `PreparedAgent` a backend builds (utils/seam/agent.py)."""
