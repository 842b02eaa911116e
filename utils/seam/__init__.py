"""The seam between the pipeline and where instances run: the sandbox protocol and its specs
(protocol.py), its errors (errors.py), the image settings a run passes to a backend
(image_settings.py), the prepared agent a backend builds (agent.py; utils/agents/ prepares it),
the registry of backends (registry.py), the helpers backends share (transfer.py, tree_hash.py)
and the conformance suite every backend passes (conformance.py). Nothing here imports docker or
ray."""
