"""The one base of the grader's pydantic models: unknown fields are refused, and a validated
model is not changed afterwards. Every layer may import it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """A model that refuses unknown fields and is frozen once validated."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
