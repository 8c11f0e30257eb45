from torch import nn

from fastattn import fused
from split_heads import merge_heads, split_heads


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, embedding_dim, num_heads):
        super().__init__()
        if embedding_dim % num_heads:
            raise ValueError("embedding_dim must be divisible by num_heads")
        self.num_heads = num_heads
        self.W_q = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_k = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_v = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_o = nn.Linear(embedding_dim, embedding_dim, bias=False)

    def forward(self, x):
        q, k, v = (split_heads(W(x), self.num_heads) for W in (self.W_q, self.W_k, self.W_v))
        return self.W_o(merge_heads(fused(q, k, v)))
