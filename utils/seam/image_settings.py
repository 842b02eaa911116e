"""What defines the images of a run, whatever backend builds them: the base image and the CA
bundle installed into every image's trust store (TLS-intercepting proxies), and what a build
reports. Imported above the sandbox seam: no backend import here."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import ImageError

DEFAULT_BASE_IMAGE = os.environ.get("POLYGLOT_BASE_IMAGE", "debian:bookworm-slim")
CA_BUNDLE_ENV = "POLYGLOT_CA_BUNDLE"
SYSTEM_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"  # Debian's ca-certificates bundle


@dataclass(frozen=True)
class ImageSettings:
    base_image: str = DEFAULT_BASE_IMAGE
    ca_bundle: Path | None = None  # PEM file installed into every image's trust store

    @staticmethod
    def from_env(base_image: str | None = None, ca_bundle: str | None = None) -> "ImageSettings":
        """`ca_bundle` (else $POLYGLOT_CA_BUNDLE): a PEM path, "none", or "auto" (the default:
        the host's system bundle when it exists, so TLS-intercepting proxies work)."""
        choice = ca_bundle if ca_bundle is not None else os.environ.get(CA_BUNDLE_ENV, "auto")
        if choice in ("", "none"):
            bundle = None
        elif choice == "auto":
            bundle = SYSTEM_CA_BUNDLE if Path(SYSTEM_CA_BUNDLE).is_file() else None
        elif Path(choice).is_file():
            bundle = choice
        else:
            raise ImageError(f"CA bundle {choice} is not a file (give a PEM path, 'auto' or 'none')")
        return ImageSettings(base_image=base_image or DEFAULT_BASE_IMAGE, ca_bundle=Path(bundle) if bundle else None)


@dataclass(frozen=True)
class ImageResult:
    name: str
    tag: str
    built: bool
    seconds: float
    log_path: Path | None
