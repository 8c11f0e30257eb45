import math

from torch import nn


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, embedding_dim, num_heads):
        super().__init__()
        if embedding_dim % num_heads != 0:
            raise ValueError(f"{num_heads} heads do not divide {embedding_dim} channels")
        self.num_heads = num_heads
        self.head_dim = embedding_dim // num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (
            nn.Linear(embedding_dim, embedding_dim, bias=False) for _ in range(4)
        )

    def forward(self, x):
        shape = (self.num_heads, self.head_dim)
        q, k, v = (
            layer(x).unflatten(-1, shape).permute(0, 2, 1, 3)
            for layer in (self.W_q, self.W_k, self.W_v)
        )
        att = (q @ k.mT).div(math.sqrt(self.head_dim)).softmax(-1)
        return self.W_o((att @ v).permute(0, 2, 1, 3).flatten(-2))
