from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from typing import NamedTuple, Optional

import torch
from torch import nn

from attention import attend
from split_heads import merge_heads, split_heads

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Config:
    d_model: int
    num_heads: int
    dropout: float = 0.1


class Output(NamedTuple):
    output: torch.Tensor
    attention_weights: torch.Tensor


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        self.config = Config(d_model, num_heads, dropout)
        assert d_model % num_heads == 0
        if dropout > 0.5:
            warnings.warn("large dropout", stacklevel=2)
        log.debug("building %s", self.config)
        self.num_heads = num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> Output:
        q = split_heads(self.W_q(x), self.num_heads)
        k = split_heads(self.W_k(x), self.num_heads)
        v = split_heads(self.W_v(x), self.num_heads)
        out, weights = attend(q, k, v, mask, self.dropout)
        return Output(self.W_o(merge_heads(out)), weights)
