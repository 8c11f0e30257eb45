"""Fingerprints of a document: copydetect's winnowing (Schleimer, Wilkerson and Aiken, 2003)
of its k-grams' hashes, each fingerprint with the offsets in the text where it was selected.
The hashes are stable (CRC-32 and Adler-32), not Python's salted `hash`: a class is ranked the
same way on every run."""

from __future__ import annotations

import zlib
from collections.abc import Collection

import numpy as np
from copydetect.utils import winnow

K = 18
"""Characters of a k-gram of canonical code: a match shorter than this is noise."""
WINDOW = 4
"""k-grams per winnowing window: a match of K + WINDOW - 1 characters is always found."""

Fingerprints = dict[int, list[int]]
"""A fingerprint's hash, and where in the text it was selected."""


def kgram_hashes(text: str) -> np.ndarray:
    data = text.encode("utf-8", "surrogatepass")
    grams = (data[i : i + K] for i in range(len(data) - K + 1))
    return np.array([zlib.crc32(g) << 31 ^ zlib.adler32(g) for g in grams], dtype=np.int64)


def fingerprints(text: str, boilerplate: Collection[int] = ()) -> Fingerprints:
    """The winnowed fingerprints of `text`, less those of `boilerplate`."""
    if len(text) < K:
        return {}
    hashes, offsets = winnow(kgram_hashes(text), WINDOW, remove_duplicates=False)
    found: Fingerprints = {}
    for value, offset in zip(hashes.tolist(), offsets.tolist(), strict=True):
        if value not in boilerplate:
            found.setdefault(value, []).append(offset)
    return found
