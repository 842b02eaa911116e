"""Below the seam: one package per sandbox backend, the only code that imports docker or ray.

A package here is a backend by being here (utils/seam/registry.py finds it by its folder
name): its `__init__.py` says what it is and exposes `open_provider(**options)`, and it passes
the conformance suite (utils/seam/conformance.py; tests/test_conformance.py runs it over every
package here)."""
