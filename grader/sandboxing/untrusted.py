"""Decoding bytes a candidate's process wrote: JSON and safetensors, each with its caps checked
before anything is built from it, and every failure an `InvalidOutput`, never a crash. Tensors
are built only of the dtypes the host's checks can judge (`JUDGED`)."""

from __future__ import annotations

import json
import struct
from typing import Any, TypeVar

import torch
from pydantic import BaseModel, ValidationError
from safetensors import deserialize

MAX_JSON_BYTES = 2_000_000
MAX_TENSOR_FILE_BYTES = 16_000_000
MAX_HEADER_BYTES = 256 << 10
MAX_TENSORS = 512
MAX_DIMS = 16
JUDGED = {
    "BOOL": torch.bool,
    "U8": torch.uint8,
    "I8": torch.int8,
    "I16": torch.int16,
    "I32": torch.int32,
    "I64": torch.int64,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "F32": torch.float32,
    "F64": torch.float64,
}
"""The safetensors dtypes the host builds tensors of: a tensor of another (float8, wide unsigned
integers) is left out, and a check says which dtype was returned instead of reading it."""
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
    before anything is built from them; those of a dtype the host cannot judge left out."""
    if len(data) > MAX_TENSOR_FILE_BYTES:
        raise InvalidOutput(f"{what}: {len(data)} bytes of tensors is over the limit")
    if len(data) < 8:
        raise InvalidOutput(f"{what}: not a safetensors file")
    (length,) = struct.unpack_from("<Q", data)
    if length > min(MAX_HEADER_BYTES, len(data) - 8):
        raise InvalidOutput(f"{what}: a header of {length} bytes")
    check_header(data[8 : 8 + length], what)
    try:
        views: list[tuple[str, dict[str, Any]]] = deserialize(data)  # type: ignore[no-untyped-call]
    except Exception as exc:  # any failure to decode candidate bytes is theirs
        raise InvalidOutput(f"{what}: {str(exc)[:300]}") from exc
    return {name: built(view) for name, view in views if view["dtype"] in JUDGED}


def built(view: dict[str, Any]) -> torch.Tensor:
    """A tensor of a `JUDGED` dtype from its decoded bytes (safetensors checked their size)."""
    dtype = JUDGED[view["dtype"]]
    if not view["data"]:  # torch.frombuffer refuses an empty buffer
        return torch.empty(view["shape"], dtype=dtype)
    return torch.frombuffer(view["data"], dtype=dtype).reshape(view["shape"])


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
