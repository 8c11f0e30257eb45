"""Decoding bytes a candidate's process wrote: JSON and safetensors, each with its caps checked
before anything is built from it, and every failure an `InvalidOutput`, never a crash."""

from __future__ import annotations

import json
import struct
from typing import TypeVar

import torch
from pydantic import BaseModel, ValidationError
from safetensors.torch import load

MAX_JSON_BYTES = 2_000_000
MAX_TENSOR_FILE_BYTES = 16_000_000
MAX_HEADER_BYTES = 256 << 10
MAX_TENSORS = 512
MAX_DIMS = 16
M = TypeVar("M", bound=BaseModel)


class InvalidOutput(Exception):
    """A file from the worker that is too large or not of the expected form."""


def validated(model: type[M], raw: bytes, what: str) -> M:
    """A model read from JSON bytes: pydantic's parser caps the nesting, its schema the rest."""
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        count = exc.error_count()
        if count > 1:  # listing them all could take seconds: the count is enough
            raise InvalidOutput(f"{what}: {count} validation errors for {model.__name__}") from exc
        error = exc.errors()[0]
        if error["type"] == "json_invalid" and "recursion limit" in error["msg"]:
            raise InvalidOutput(f"{what}: JSON nested too deeply") from exc
        raise InvalidOutput(f"{what}: {str(exc)[:300]}") from exc


def tensors_from(data: bytes, what: str) -> dict[str, torch.Tensor]:
    """Tensors from safetensors bytes, the header checked (size, entry count, dimensions)
    before anything is built from them."""
    if len(data) > MAX_TENSOR_FILE_BYTES:
        raise InvalidOutput(f"{what}: {len(data)} bytes of tensors is over the limit")
    if len(data) < 8:
        raise InvalidOutput(f"{what}: not a safetensors file")
    (length,) = struct.unpack_from("<Q", data)
    if length > min(MAX_HEADER_BYTES, len(data) - 8):
        raise InvalidOutput(f"{what}: a header of {length} bytes")
    check_header(data[8 : 8 + length], what)
    try:
        return load(data)
    except Exception as exc:  # any failure to decode candidate bytes is theirs
        raise InvalidOutput(f"{what}: {str(exc)[:300]}") from exc


def check_header(raw: bytes, what: str) -> None:
    """A safetensors header of at most `MAX_TENSORS` entries, each of at most `MAX_DIMS`
    dimensions (the library checks the rest)."""
    try:
        header = json.loads(raw)
    except RecursionError as exc:
        raise InvalidOutput(f"{what}: JSON nested too deeply") from exc
    except ValueError as exc:
        raise InvalidOutput(f"{what}: {str(exc)[:300]}") from exc
    if not isinstance(header, dict):
        raise InvalidOutput(f"{what}: the header is not an object")
    entries = [v for k, v in header.items() if k != "__metadata__"]
    if len(entries) > MAX_TENSORS:
        raise InvalidOutput(f"{what}: {len(entries)} tensors, over {MAX_TENSORS}")
    for entry in entries:
        shape = entry.get("shape") if isinstance(entry, dict) else None
        if not isinstance(shape, list) or len(shape) > MAX_DIMS:
            raise InvalidOutput(
                f"{what}: a tensor whose shape is not a list of {MAX_DIMS} or fewer"
            )
