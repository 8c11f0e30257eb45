import torch
from torch import nn

from attention import attend


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        ones = torch.ones(context_length, context_length)
        self.register_buffer("mask", torch.triu(ones, diagonal=1).bool())

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        out, _ = attend(q, k, v, self.mask[:T, :T], self.dropout)
        return out


import unittest


class TestCausalAttention(unittest.TestCase):
    def test_against_sdpa(self):
        m = CausalAttention(8, 8, 6, 0.0).eval()
        x = torch.randn(2, 6, 8)
        ref = torch.nn.functional.scaled_dot_product_attention(m.W_query(x), m.W_key(x), m.W_value(x), is_causal=True)
        self.assertTrue(torch.allclose(m(x), ref, atol=1e-6))


if __name__ == "__main__":
    unittest.main()
