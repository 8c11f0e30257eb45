"""Decoding files a candidate's process wrote: JSON and safetensors, each with its caps checked
before anything is built from it, and every failure an `InvalidOutput`, never a crash."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load

from grader.sandbox.capped import read_capped, read_file_capped

MAX_JSON_BYTES = 2_000_000
MAX_JSON_DEPTH = 32
MAX_TENSOR_FILE_BYTES = 16_000_000
MAX_HEADER_BYTES = 256 << 10
MAX_TENSORS = 512
MAX_DIMS = 16


class InvalidOutput(Exception):
    """A file from the worker that is too large or not of the expected form."""


def parse_json(raw: bytes, what: str) -> Any:
    """JSON nested at most `MAX_JSON_DEPTH` deep (deeper input fails, however deep)."""
    try:
        value = json.loads(raw)
    except RecursionError as exc:
        raise InvalidOutput(f"{what}: JSON nested too deeply") from exc
    except ValueError as exc:
        raise InvalidOutput(f"{what}: {str(exc)[:300]}") from exc
    if depth(value) > MAX_JSON_DEPTH:
        raise InvalidOutput(f"{what}: JSON nested over {MAX_JSON_DEPTH} deep")
    return value


def depth(value: Any) -> int:
    """How deep lists and dicts nest in `value` (0 for a scalar), without recursion."""
    deepest = 0
    todo = [(value, 1)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, level)
            todo.extend((child, level + 1) for child in item)
    return deepest


def read_json(path: Path) -> Any:
    """A JSON file of at most `MAX_JSON_BYTES`."""
    raw, more = read_file_capped(path, MAX_JSON_BYTES)
    if more:
        raise InvalidOutput(f"{path.name}: over the limit of {MAX_JSON_BYTES} bytes")
    return parse_json(raw, path.name)


def read_tensors(path: Path) -> dict[str, torch.Tensor]:
    """A safetensors file, its header checked (size, entry count, dimensions) before the rest
    of the file is read."""
    size = path.stat().st_size
    if size > MAX_TENSOR_FILE_BYTES:
        raise InvalidOutput(f"{path.name}: {size} bytes is over the limit")
    with path.open("rb") as handle:
        prefix = handle.read(8)
        if len(prefix) < 8:
            raise InvalidOutput(f"{path.name}: not a safetensors file")
        (length,) = struct.unpack("<Q", prefix)
        if length > min(MAX_HEADER_BYTES, size - 8):
            raise InvalidOutput(f"{path.name}: a header of {length} bytes")
        raw = handle.read(length)
        check_header(parse_json(raw, path.name), path.name)
        rest, more = read_capped(handle, MAX_TENSOR_FILE_BYTES - len(prefix) - length)
        if more:  # it grew since its size was read
            raise InvalidOutput(f"{path.name}: over the limit of {MAX_TENSOR_FILE_BYTES} bytes")
        data = prefix + raw + rest
    try:
        return load(data)
    except Exception as exc:  # any failure to decode candidate bytes is theirs
        raise InvalidOutput(f"{path.name}: {str(exc)[:300]}") from exc


def check_header(header: Any, name: str) -> None:
    """At most `MAX_TENSORS` entries, each with at most `MAX_DIMS` dimensions."""
    if not isinstance(header, dict):
        raise InvalidOutput(f"{name}: the header is not an object")
    entries = [v for k, v in header.items() if k != "__metadata__"]
    if len(entries) > MAX_TENSORS:
        raise InvalidOutput(f"{name}: {len(entries)} tensors, over {MAX_TENSORS}")
    for entry in entries:
        shape = entry.get("shape") if isinstance(entry, dict) else None
        if not isinstance(shape, list) or len(shape) > MAX_DIMS:
            raise InvalidOutput(f"{name}: a tensor of shape {str(shape)[:100]}")
