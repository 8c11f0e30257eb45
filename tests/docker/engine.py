"""The image under test (GRADER_DOCKER_IMAGE) and the containers made from it.

Containers are counted by label and image, so that graders running other images on the same
engine do not disturb the tests."""

from __future__ import annotations

import os

from grader.sandboxing.defaults import DEFAULT_TAG
from grader.sandboxing.engine import LABEL, RUN_LABEL, client

IMAGE = os.environ.get("GRADER_DOCKER_IMAGE", DEFAULT_TAG)


def sandbox_containers() -> list[str]:
    """Ids of the grader's containers, running or not, made from the image under test."""
    listed = client().containers.list(all=True, filters={"label": LABEL}, sparse=True)
    return [str(c.id) for c in listed if c.attrs.get("Image") == IMAGE]


def process_containers(pid: int) -> list[str]:
    """Ids of the containers, running or not, that the grader process `pid` made (its runs'
    labels start with its pid)."""
    listed = client().containers.list(all=True, filters={"label": RUN_LABEL}, sparse=True)
    runs = {str(c.id): str(c.attrs.get("Labels", {}).get(RUN_LABEL, "")) for c in listed}
    return [cid for cid, run in runs.items() if run.startswith(f"{pid}-")]
