"""My attention helpers, as a package."""
from .core import attend

__all__ = ["attend"]
