import torch.nn.functional as F
from torch import nn


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, embedding_dim, num_heads):
        super().__init__()
        assert embedding_dim % num_heads == 0
        self.h = num_heads
        self.W_q = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_k = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_v = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_o = nn.Linear(embedding_dim, embedding_dim, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (w(x).view(b, t, self.h, -1).transpose(1, 2) for w in (self.W_q, self.W_k, self.W_v))
        att = F.softmax((q @ k.transpose(-2, -1)) * k.size(-1) ** -0.5, dim=-1)
        return self.W_o((att @ v).transpose(1, 2).reshape(b, t, -1))
