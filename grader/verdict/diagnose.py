"""Known mistakes, replayed on the host with the grader's weights to name what a candidate did.

A form computes a problem's output from the weights and inputs of a probe, with or without one
mistake. Specs name their form and the mistakes worth trying; `forms.none` must equal the
reference (the tests hold every form to that).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from itertools import permutations
from typing import Any

import torch
from torch.nn import functional as F

from grader.errors import GraderFault

MISTAKES: dict[str, str] = {
    "scale_sqrt_c": "scores scaled by sqrt(C), the full width, instead of sqrt(head_dim)",
    "scale_d_in": "scores scaled by sqrt(d_in) instead of sqrt(d_out)",
    "no_scale": "scores not scaled at all (missing / sqrt(head_dim))",
    "double_scale": "scores scaled twice (divided by head_dim instead of sqrt(head_dim))",
    "view_no_transpose": "heads split with view(B, nh, T, hd) and no transpose: "
    "right shape, scrambled data",
    "interleaved_heads": "heads take every nh-th channel (view(B, T, hd, nh)) instead of "
    "contiguous blocks of head_dim channels",
    "merge_no_transpose": "heads merged with view(B, T, C) without transposing back first",
    "no_causal_mask": "no causal mask: tokens attend to future tokens",
    "inverted_mask": "causal mask inverted: tokens attend to the future instead of the past",
    "diagonal_masked": "mask off by one: a token may not attend to itself",
    "future_one_step": "mask off by one: a token also attends to the next token",
    "softmax_wrong_dim": "softmax over the queries (dim -2) instead of the keys (dim -1)",
    "no_out_proj": "output projection missing",
    "qkv_order": "Q, K and V taken from the fused projection in the wrong order",
    "mask_ignored": "the mask argument is ignored",
    "mask_semantics_inverted": "mask semantics inverted: True treated as 'may attend'",
    "weights_before_softmax": "attention weights returned before the softmax (raw scores)",
    "qkv_heads_first": "the fused projection split into heads before Q, K and V: each head "
    "takes its q, k, v from one block of 3 * head_dim channels instead of [Q | K | V]",
    "causal_mask_added": "a causal mask applied: this attention is bidirectional",
    "float32_precision": "computed in float32 inside a float64 forward (a softmax or a scale "
    "in float32, cast back): float64 inputs lose precision",
}
MIXES_TOKENS = frozenset({"view_no_transpose", "merge_no_transpose"})
"""Mistakes that move values across token positions: causality fails with them, mask or not."""
PRECISION = "float32_precision"
"""Tried on every form where the inputs are float64, after the spec's mistakes."""


@dataclass(frozen=True)
class Match:
    mistake: str
    description: str


@dataclass(frozen=True)
class Knobs:
    """One variant of the computation: at most one mistake switched on."""

    mistake: str | None = None
    qkv_order: tuple[int, int, int] = (0, 1, 2)
    finite_fill: bool = False  # blocked scores filled with the dtype's lowest number, not -inf


# ------------------------------------------------------------------------ building blocks


def split(x: torch.Tensor, heads: int, knobs: Knobs) -> torch.Tensor:
    """(B, T, C) -> (B, nh, T, hd)."""
    b, t, c = x.shape
    if knobs.mistake == "view_no_transpose":
        return x.reshape(b, heads, t, c // heads)
    if knobs.mistake == "interleaved_heads":
        return x.reshape(b, t, c // heads, heads).permute(0, 3, 1, 2)
    return x.reshape(b, t, heads, c // heads).transpose(1, 2)


def merge(x: torch.Tensor, knobs: Knobs) -> torch.Tensor:
    """(B, nh, T, hd) -> (B, T, C)."""
    b, h, t, d = x.shape
    if knobs.mistake == "merge_no_transpose":
        return x.reshape(b, t, h * d)
    return x.transpose(1, 2).reshape(b, t, h * d)


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    knobs: Knobs,
    causal: bool,
    width: int,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention over (..., T, d) tensors: (output, weights)."""
    d = q.shape[-1]
    scale = {
        "scale_sqrt_c": math.sqrt(width),
        "scale_d_in": math.sqrt(width),
        "no_scale": 1.0,
        "double_scale": float(d),
    }.get(knobs.mistake or "", math.sqrt(d))
    scores = q @ k.transpose(-2, -1) / scale
    t = q.shape[-2]
    blocked = None
    if (causal or knobs.mistake == "causal_mask_added") and knobs.mistake != "no_causal_mask":
        offset = {"diagonal_masked": 0, "future_one_step": 2}.get(knobs.mistake or "", 1)
        blocked = torch.ones(t, t, dtype=torch.bool, device=q.device).triu(offset)
        if knobs.mistake == "inverted_mask":
            blocked = ~blocked
    if mask is not None and knobs.mistake != "mask_ignored":
        given = ~mask if knobs.mistake == "mask_semantics_inverted" else mask
        blocked = given if blocked is None else blocked | given
    if blocked is not None:
        fill = torch.finfo(scores.dtype).min if knobs.finite_fill else float("-inf")
        scores = scores.masked_fill(blocked, fill)
    weights = torch.softmax(scores, dim=-2 if knobs.mistake == "softmax_wrong_dim" else -1)
    returned = scores if knobs.mistake == "weights_before_softmax" else weights
    return weights @ v, returned


def linear(x: torch.Tensor, w: dict[str, torch.Tensor], name: str) -> torch.Tensor:
    return F.linear(x, w[f"{name}.weight"], w.get(f"{name}.bias"))


# ------------------------------------------------------------------------ forms


def form_split_heads(
    w: dict[str, torch.Tensor], args: list[Any], kw: dict[str, Any], p: dict[str, Any], k: Knobs
) -> Any:
    """Problem 4's functions: split (args x, nh) or merge (args x)."""
    if p.get("function", "split_heads") == "merge_heads":
        return merge(args[0], k)
    return split(args[0], int(args[1]), k)


def form_fused(
    w: dict[str, torch.Tensor], args: list[Any], kw: dict[str, Any], p: dict[str, Any], k: Knobs
) -> Any:
    """Fused [Q | K | V] projection, multi-head, causal or masked, with an output projection."""
    x = args[p.get("x_arg", 0)]
    heads = int(p["heads"])
    c = x.shape[-1]
    projected = linear(x, w, p.get("qkv", "qkv"))
    if k.mistake == "qkv_heads_first":
        b, t, _ = x.shape
        per_head = projected.reshape(b, t, heads, 3 * (c // heads)).transpose(1, 2)
        q, key, v = per_head.chunk(3, dim=-1)
    else:
        qkv = projected.split(c, dim=-1)
        q, key, v = (split(qkv[i], heads, k) for i in k.qkv_order)
    out, weights = attend(q, key, v, k, bool(p.get("causal", True)), c, kw.get("mask"))
    y = merge(out, k if k.mistake == "merge_no_transpose" else Knobs())
    y = y if k.mistake == "no_out_proj" else linear(y, w, p.get("proj", "proj"))
    return (y, weights) if p.get("returns_weights") else y


def form_separate(
    w: dict[str, torch.Tensor], args: list[Any], kw: dict[str, Any], p: dict[str, Any], k: Knobs
) -> Any:
    """Separate Q, K, V projections (optionally biased), multi-head, with an output projection."""
    x = args[0]
    heads = int(p["heads"])
    names = [p["q"], p["k"], p["v"]]
    projected = [linear(x, w, names[i]) for i in k.qkv_order]
    q, key, v = (split(t, heads, k) for t in projected)
    width = int(p.get("width", projected[0].shape[-1]))
    out, weights = attend(q, key, v, k, bool(p.get("causal", False)), width, kw.get("mask"))
    y = merge(out, k if k.mistake == "merge_no_transpose" else Knobs())
    if k.mistake != "no_out_proj" and p.get("o"):
        y = linear(y, w, p["o"])
    return (y, weights) if p.get("returns_weights") else y


def form_single(
    w: dict[str, torch.Tensor], args: list[Any], kw: dict[str, Any], p: dict[str, Any], k: Knobs
) -> Any:
    """One head, causal or not: Q, K, V projections (optionally biased) from d_in to d_out, scores
    scaled by sqrt(d_out), no output projection; `prefix` names the head's layers."""
    x = args[0]
    names = [p.get("prefix", "") + p[name] for name in ("q", "k", "v")]
    q, key, v = (linear(x, w, names[i]) for i in k.qkv_order)
    out, _ = attend(q, key, v, k, bool(p.get("causal", False)), x.shape[-1])
    return out


def form_stack(
    w: dict[str, torch.Tensor], args: list[Any], kw: dict[str, Any], p: dict[str, Any], k: Knobs
) -> Any:
    """A stack of single heads `heads.{i}`, their outputs concatenated on the last dim."""
    outs = [form_single(w, args, kw, {**p, "prefix": f"heads.{i}."}, k) for i in range(p["heads"])]
    return torch.cat(outs, dim=-1)


Form = Callable[..., Any]
"""(weights, args, kwargs, params, knobs) -> the output, or a tuple of outputs."""

FORMS: dict[str, Form] = {
    "split_heads": form_split_heads,
    "fused": form_fused,
    "separate": form_separate,
    "single": form_single,
    "stack": form_stack,
}


@dataclass(frozen=True)
class Diagnoses:
    """The forms and mistakes a problem's diagnosis may name: the grader's, and its course's."""

    forms: Mapping[str, Form]
    mistakes: Mapping[str, str]
    own: frozenset[str] = frozenset()  # the course's forms: their failures are told, not skipped

    def with_own(self, forms: Mapping[str, Form], mistakes: Mapping[str, str]) -> Diagnoses:
        return Diagnoses({**self.forms, **forms}, {**self.mistakes, **mistakes}, frozenset(forms))


BUILTIN = Diagnoses(FORMS, MISTAKES)
_OWN: ContextVar[tuple[dict[str, Form], dict[str, str]] | None] = ContextVar("own", default=None)


@contextmanager
def own_forms() -> Iterator[tuple[dict[str, Form], dict[str, str]]]:
    """Collect the forms (and their mistakes) registered meanwhile: a problem's `checks.py`."""
    found: tuple[dict[str, Form], dict[str, str]] = ({}, {})
    token = _OWN.set(found)
    try:
        yield found
    finally:
        _OWN.reset(token)


def form(name: str, mistakes: Mapping[str, str]) -> Callable[[Form], Form]:
    """A course's own diagnosis form, in a problem's `checks.py`: `fn(weights, args, kwargs,
    params, knobs)` computes the problem's output with `knobs.mistake` (one of `mistakes`, each
    with what the candidate is told) switched on, or none; with none it must equal the
    reference."""

    def add(fn: Form) -> Form:
        own = _OWN.get()
        if own is None:
            raise ValueError("a diagnosis form is a course's: define it in a problem's checks.py")
        taken = [m for m in (name, *mistakes) if m in FORMS or m in MISTAKES]
        if taken:
            raise ValueError(f"{', '.join(taken)}: the grader's own names: give yours others")
        own[0][name] = fn
        own[1].update(mistakes)
        return fn

    return add


def variants(mistakes: list[str]) -> list[tuple[str, Knobs]]:
    """Each mistake as knobs; `qkv_order` stands for every wrong order of Q, K and V."""
    out: list[tuple[str, Knobs]] = []
    for mistake in mistakes:
        if mistake == "qkv_order":
            out += [
                (mistake, Knobs(qkv_order=order))  # type: ignore[arg-type]
                for order in permutations(range(3))
                if order != (0, 1, 2)
            ]
        else:
            out.append((mistake, Knobs(mistake=mistake)))
    return out


def compute(
    form: Form,
    weights: dict[str, torch.Tensor],
    args: list[Any],
    kwargs: dict[str, Any],
    params: dict[str, Any],
    knobs: Knobs,
) -> list[torch.Tensor]:
    out = form(weights, args, kwargs, params, knobs)
    return list(out) if isinstance(out, tuple) else [out]


def close(a: torch.Tensor, b: torch.Tensor, atol: float, rtol: float) -> bool:
    if a.shape != b.shape:
        return False
    return bool(torch.allclose(a.double(), b.double(), atol=atol, rtol=rtol, equal_nan=True))


def single(values: Any) -> Any:
    """Float64 tensors (in a list or a dict of them) as float32: a float32 computation."""
    if isinstance(values, dict):
        return {k: single(v) for k, v in values.items()}
    if isinstance(values, list):
        return [single(v) for v in values]
    is_double = isinstance(values, torch.Tensor) and values.dtype == torch.float64
    return values.float() if is_double else values


def identify(
    name: str,
    diagnoses: Diagnoses,
    mistakes: list[str],
    weights: dict[str, torch.Tensor],
    args: list[Any],
    kwargs: dict[str, Any],
    params: dict[str, Any],
    got: dict[int, torch.Tensor],
    atol: float,
    rtol: float,
) -> Match | None:
    """The first known mistake whose outputs match every output the candidate returned (by
    index), and that changes at least one of them: a mistake that leaves what was compared as
    it is explains nothing. Float64 inputs also try the whole form in float32."""
    form = diagnoses.forms[name]
    inputs = (weights, args, kwargs)
    tried = [(mistake, knobs, inputs) for mistake, knobs in variants(mistakes)]
    if any(isinstance(a, torch.Tensor) and a.dtype == torch.float64 for a in args):
        tried.append((PRECISION, Knobs(), (single(weights), single(args), single(kwargs))))
    try:
        correct = {
            fill: compute(form, weights, args, kwargs, params, Knobs(finite_fill=fill))
            for fill in (False, True)
        }
    except Exception as exc:  # a form without a mistake fails: the course's bug is told
        if name in diagnoses.own:
            raise GraderFault(f"the diagnosis form {name!r} raised {exc!r}") from exc
        correct = {}
    for mistake, knobs, (w, a, kw) in tried:
        try:
            expected = compute(form, w, a, kw, params, knobs)
            unmatched = not all(close(g, expected[i], atol, rtol) for i, g in got.items())
            if unmatched and not all(bool(e.isfinite().all()) for e in expected):
                # a row the mistake blocks whole is NaN with -inf, uniform with a finite fill
                knobs = replace(knobs, finite_fill=True)
                expected = compute(form, w, a, kw, params, knobs)
        except (RuntimeError, ValueError, IndexError):
            continue
        if len(expected) < len(got) or not got:
            continue
        if not all(close(g, expected[i], atol, rtol) for i, g in got.items()):
            continue
        right = correct.get(knobs.finite_fill, [])  # with the same fill
        same = len(right) == len(expected) and all(torch.equal(expected[i], right[i]) for i in got)
        if not same:
            return Match(mistake, diagnoses.mistakes[mistake])
    return None


def locate(diff: torch.Tensor, head_dim: int | None) -> str:
    """Where the largest error of a (B, T, C) or (B, nh, T, ...) difference is."""
    if diff.numel() == 0:
        return ""
    index = [
        int(i) for i in torch.unravel_index(torch.argmax(diff.nan_to_num(nan=math.inf)), diff.shape)
    ]
    if diff.dim() == 3:
        b, t, c = index
        head = f", head {c // head_dim}" if head_dim else ""
        return f"batch {b}, token {t}, channel {c}{head}"
    if diff.dim() == 4:
        b, h, t, last = index
        return f"batch {b}, head {h}, token {t}, position {last}"
    return "index " + str(tuple(index))
