"""Decoding candidate-written JSON and safetensors: every cap holds before anything is built,
and every failure is an `InvalidOutput`, never a crash of the grader."""

from __future__ import annotations

import json
import struct
import tracemalloc

import pytest
import torch
from safetensors.torch import save

from grader.sandboxing import untrusted
from grader.sandboxing.untrusted import InvalidOutput, tensors_from


def test_a_header_nested_100000_deep_is_invalid_not_a_crash() -> None:
    with pytest.raises(InvalidOutput, match="nested too deeply"):
        tensors_from(safetensors_bytes(b"[" * 100_000 + b"]" * 100_000), "t")


@pytest.mark.parametrize("raw", [b"{", b"\xff\xfe", b"1" * 5000, b""])
def test_a_malformed_header_is_invalid(raw: bytes) -> None:
    with pytest.raises(InvalidOutput):
        tensors_from(safetensors_bytes(raw), "t")


def test_well_formed_tensors_are_read() -> None:
    data = save({"a": torch.arange(6.0).reshape(2, 3)})
    assert tensors_from(data, "t")["a"].tolist() == [[0, 1, 2], [3, 4, 5]]


def safetensors_bytes(header: bytes, body: bytes = b"") -> bytes:
    return struct.pack("<Q", len(header)) + header + body


def entries(count: int, shape: list[object] | None = None) -> bytes:
    entry = json.dumps({"dtype": "U8", "shape": shape or [0], "data_offsets": [0, 0]})
    return ("{" + ",".join(f'"{i:x}":{entry}' for i in range(count)) + "}").encode()


def test_a_million_empty_tensors_are_refused_before_loading() -> None:
    """The attack: 1.1 M empty tensors in a 62 MB header took 3 GB and 2 minutes to load."""
    bomb = safetensors_bytes(entries(1_100_000))
    tracemalloc.start()
    with pytest.raises(InvalidOutput, match=r"over the limit|a header of"):
        tensors_from(bomb, "bomb")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 << 20, peak  # read as a header of too many entries, never loaded


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (entries(untrusted.MAX_TENSORS + 1), "tensors, over"),
        (entries(1, [1] * (untrusted.MAX_DIMS + 1)), "shape is not a list of 16"),
        (entries(1, [0, "x"]), "deserializing"),  # safetensors' own checks
        (b"[1, 2]", "not an object"),
        (b'{"a":' * 40 + b"1" + b"}" * 40, "shape is not a list"),
    ],
    ids=["count", "dims", "shape", "list", "depth"],
)
def test_headers_over_a_cap_or_malformed_are_invalid(header: bytes, message: str) -> None:
    with pytest.raises(InvalidOutput, match=message):
        tensors_from(safetensors_bytes(header), "t")


def test_header_length_is_checked_before_it_is_read() -> None:
    with pytest.raises(InvalidOutput, match="a header of"):
        tensors_from(struct.pack("<Q", 1 << 60) + b"{}", "t")
    with pytest.raises(InvalidOutput, match="not a safetensors file"):
        tensors_from(b"\x01", "t")
