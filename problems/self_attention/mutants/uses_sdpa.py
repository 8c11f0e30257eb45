# expect-fail: no forbidden API
import torch.nn.functional as F
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, embedding_dim):
        super().__init__()
        self.W_q = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_k = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_v = nn.Linear(embedding_dim, embedding_dim, bias=False)

    def forward(self, x):
        return F.scaled_dot_product_attention(self.W_q(x), self.W_k(x), self.W_v(x))
