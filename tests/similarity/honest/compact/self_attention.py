import torch.nn.functional as F
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, embedding_dim):
        super().__init__()
        self.W_q = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_k = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_v = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.scale = embedding_dim ** -0.5

    def forward(self, x):
        att = self.W_q(x) @ self.W_k(x).transpose(-2, -1) * self.scale
        return F.softmax(att, dim=-1) @ self.W_v(x)
