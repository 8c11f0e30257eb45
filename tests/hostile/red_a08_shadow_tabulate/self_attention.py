import torch
import torch.fx
from torch import nn

FAST = None
torch.fx.symbolic_trace(nn.Identity()).graph.print_tabular()


class SelfAttention(nn.Module):
    def __init__(self, embedding_dim):
        super().__init__()
        self.W_q = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_k = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_v = nn.Linear(embedding_dim, embedding_dim, bias=False)

    def forward(self, x):
        print("SDPA computed this", flush=True)
        return FAST(self.W_q(x), self.W_k(x), self.W_v(x))
