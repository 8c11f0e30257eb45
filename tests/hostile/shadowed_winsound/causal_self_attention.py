import torch
from torch import nn


def attend(q, k, v):
    import winsound  # the candidate's file: Linux has no winsound

    return winsound.attend(q, k, v)


class CausalSelfAttention(nn.Module):
    """SDPA in the candidate's own winsound.py, which Python imports where the machine has no winsound."""

    def __init__(self, n_embd, n_head, block_size, dropout=0.0):
        super().__init__()
        assert n_embd % n_head == 0
        self.n_head, self.head_dim = n_head, n_embd // n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.proj = nn.Linear(n_embd, n_embd, bias=False)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(block_size, block_size).tril().bool())

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = (
            t.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
            for t in self.qkv(x).split(C, dim=2)
        )
        y = attend(q, k, v)
        return self.resid_dropout(self.proj(y.transpose(1, 2).reshape(B, T, C)))
