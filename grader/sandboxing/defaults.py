"""The sandbox image's defaults: its tag, its base, the torch and Python it holds, and where its
downloads are kept; apart from `image.py`, so that reading them imports no Docker client."""

from pathlib import Path

CACHE_DIR = Path(".cache") / "sandbox"
"""Where `sandbox base` and `sandbox wheelhouse` keep their downloads, below the working folder."""
DEFAULT_TAG = "attention-grader-sandbox:latest"
DEFAULT_BASE = "attention-grader-base:bookworm"
TORCH_VERSION = "2.13.0"
PYTHON_VERSION = "3.11"
