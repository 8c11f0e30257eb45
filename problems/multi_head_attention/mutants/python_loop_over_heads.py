# expect-fail: no Python loop over the heads in forward
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        head_outputs = []
        for h in range(self.num_heads):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            q, k, v = queries[:, :, cols], keys[:, :, cols], values[:, :, cols]
            attn_scores = q @ k.transpose(1, 2)
            attn_scores = attn_scores.masked_fill(mask_bool, -torch.inf)
            attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
            attn_weights = self.dropout(attn_weights)
            head_outputs.append(attn_weights @ v)
        context_vec = torch.cat(head_outputs, dim=-1)
        context_vec = self.out_proj(context_vec)
        return context_vec
