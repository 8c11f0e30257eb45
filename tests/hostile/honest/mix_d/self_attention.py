import math

import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, embedding_dim):
        super().__init__()
        self.W_q = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_k = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_v = nn.Linear(embedding_dim, embedding_dim, bias=False)

    def forward(self, x):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(x.size(-1))
        return torch.bmm(torch.softmax(scores, dim=-1), v)


def test_matches_torch():
    import torch.nn.functional as F
    m = SelfAttention(8).eval()
    x = torch.randn(2, 5, 8)
    expected = F.scaled_dot_product_attention(m.W_q(x), m.W_k(x), m.W_v(x))
    assert torch.allclose(m(x), expected, atol=1e-6)
