from torch import nn
from torch.onnx.ops import attention


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
        h = self.num_heads
        out, _, _, _ = attention(self.W_q(x), self.W_k(x), self.W_v(x), q_num_heads=h, kv_num_heads=h,
                                 qk_matmul_output_mode=1)
        return self.W_o(out)
