import math

import torch
from torch import nn


class Impl(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        B, T, _ = x.shape
        def heads(t):
            return t.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        q, k, v = heads(self.W_query(x)), heads(self.W_key(x)), heads(self.W_value(x))
        s = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        w = self.dropout(torch.softmax(s.masked_fill(self.mask[:T, :T], float("-inf")), dim=-1))
        return self.out_proj((w @ v).transpose(1, 2).reshape(B, T, -1))


class L10_0(Impl):
    pass


class L10_1(Impl):
    pass


class L10_2(Impl):
    pass


class L10_3(Impl):
    pass


class L10_4(Impl):
    pass


class L10_5(Impl):
    pass


class L10_6(Impl):
    pass


class L10_7(Impl):
    pass


class L10_8(Impl):
    pass


class L10_9(Impl):
    pass


class L10_10(Impl):
    pass


class L10_11(Impl):
    pass


class L9_0(L10_0, L10_1, L10_2, L10_3, L10_4, L10_5, L10_6, L10_7, L10_8, L10_9, L10_10, L10_11):
    pass


class L9_1(L10_0, L10_1, L10_2, L10_3, L10_4, L10_5, L10_6, L10_7, L10_8, L10_9, L10_10, L10_11):
    pass


class L9_2(L10_0, L10_1, L10_2, L10_3, L10_4, L10_5, L10_6, L10_7, L10_8, L10_9, L10_10, L10_11):
    pass


class L9_3(L10_0, L10_1, L10_2, L10_3, L10_4, L10_5, L10_6, L10_7, L10_8, L10_9, L10_10, L10_11):
    pass


class L9_4(L10_0, L10_1, L10_2, L10_3, L10_4, L10_5, L10_6, L10_7, L10_8, L10_9, L10_10, L10_11):
    pass


class L9_5(L10_0, L10_1, L10_2, L10_3, L10_4, L10_5, L10_6, L10_7, L10_8, L10_9, L10_10, L10_11):
    pass


class L9_6(L10_0, L10_1, L10_2, L10_3, L10_4, L10_5, L10_6, L10_7, L10_8, L10_9, L10_10, L10_11):
    pass


class L9_7(L10_0, L10_1, L10_2, L10_3, L10_4, L10_5, L10_6, L10_7, L10_8, L10_9, L10_10, L10_11):
    pass


class L9_8(L10_0, L10_1, L10_2, L10_3, L10_4, L10_5, L10_6, L10_7, L10_8, L10_9, L10_10, L10_11):
    pass


class L9_9(L10_0, L10_1, L10_2, L10_3, L10_4, L10_5, L10_6, L10_7, L10_8, L10_9, L10_10, L10_11):
    pass


class L9_10(L10_0, L10_1, L10_2, L10_3, L10_4, L10_5, L10_6, L10_7, L10_8, L10_9, L10_10, L10_11):
    pass


class L9_11(L10_0, L10_1, L10_2, L10_3, L10_4, L10_5, L10_6, L10_7, L10_8, L10_9, L10_10, L10_11):
    pass


class L8_0(L9_0, L9_1, L9_2, L9_3, L9_4, L9_5, L9_6, L9_7, L9_8, L9_9, L9_10, L9_11):
    pass


class L8_1(L9_0, L9_1, L9_2, L9_3, L9_4, L9_5, L9_6, L9_7, L9_8, L9_9, L9_10, L9_11):
    pass


class L8_2(L9_0, L9_1, L9_2, L9_3, L9_4, L9_5, L9_6, L9_7, L9_8, L9_9, L9_10, L9_11):
    pass


class L8_3(L9_0, L9_1, L9_2, L9_3, L9_4, L9_5, L9_6, L9_7, L9_8, L9_9, L9_10, L9_11):
    pass


class L8_4(L9_0, L9_1, L9_2, L9_3, L9_4, L9_5, L9_6, L9_7, L9_8, L9_9, L9_10, L9_11):
    pass


class L8_5(L9_0, L9_1, L9_2, L9_3, L9_4, L9_5, L9_6, L9_7, L9_8, L9_9, L9_10, L9_11):
    pass


class L8_6(L9_0, L9_1, L9_2, L9_3, L9_4, L9_5, L9_6, L9_7, L9_8, L9_9, L9_10, L9_11):
    pass


class L8_7(L9_0, L9_1, L9_2, L9_3, L9_4, L9_5, L9_6, L9_7, L9_8, L9_9, L9_10, L9_11):
    pass


class L8_8(L9_0, L9_1, L9_2, L9_3, L9_4, L9_5, L9_6, L9_7, L9_8, L9_9, L9_10, L9_11):
    pass


class L8_9(L9_0, L9_1, L9_2, L9_3, L9_4, L9_5, L9_6, L9_7, L9_8, L9_9, L9_10, L9_11):
    pass


class L8_10(L9_0, L9_1, L9_2, L9_3, L9_4, L9_5, L9_6, L9_7, L9_8, L9_9, L9_10, L9_11):
    pass


class L8_11(L9_0, L9_1, L9_2, L9_3, L9_4, L9_5, L9_6, L9_7, L9_8, L9_9, L9_10, L9_11):
    pass


class L7_0(L8_0, L8_1, L8_2, L8_3, L8_4, L8_5, L8_6, L8_7, L8_8, L8_9, L8_10, L8_11):
    pass


class L7_1(L8_0, L8_1, L8_2, L8_3, L8_4, L8_5, L8_6, L8_7, L8_8, L8_9, L8_10, L8_11):
    pass


class L7_2(L8_0, L8_1, L8_2, L8_3, L8_4, L8_5, L8_6, L8_7, L8_8, L8_9, L8_10, L8_11):
    pass


class L7_3(L8_0, L8_1, L8_2, L8_3, L8_4, L8_5, L8_6, L8_7, L8_8, L8_9, L8_10, L8_11):
    pass


class L7_4(L8_0, L8_1, L8_2, L8_3, L8_4, L8_5, L8_6, L8_7, L8_8, L8_9, L8_10, L8_11):
    pass


class L7_5(L8_0, L8_1, L8_2, L8_3, L8_4, L8_5, L8_6, L8_7, L8_8, L8_9, L8_10, L8_11):
    pass


class L7_6(L8_0, L8_1, L8_2, L8_3, L8_4, L8_5, L8_6, L8_7, L8_8, L8_9, L8_10, L8_11):
    pass


class L7_7(L8_0, L8_1, L8_2, L8_3, L8_4, L8_5, L8_6, L8_7, L8_8, L8_9, L8_10, L8_11):
    pass


class L7_8(L8_0, L8_1, L8_2, L8_3, L8_4, L8_5, L8_6, L8_7, L8_8, L8_9, L8_10, L8_11):
    pass


class L7_9(L8_0, L8_1, L8_2, L8_3, L8_4, L8_5, L8_6, L8_7, L8_8, L8_9, L8_10, L8_11):
    pass


class L7_10(L8_0, L8_1, L8_2, L8_3, L8_4, L8_5, L8_6, L8_7, L8_8, L8_9, L8_10, L8_11):
    pass


class L7_11(L8_0, L8_1, L8_2, L8_3, L8_4, L8_5, L8_6, L8_7, L8_8, L8_9, L8_10, L8_11):
    pass


class L6_0(L7_0, L7_1, L7_2, L7_3, L7_4, L7_5, L7_6, L7_7, L7_8, L7_9, L7_10, L7_11):
    pass


class L6_1(L7_0, L7_1, L7_2, L7_3, L7_4, L7_5, L7_6, L7_7, L7_8, L7_9, L7_10, L7_11):
    pass


class L6_2(L7_0, L7_1, L7_2, L7_3, L7_4, L7_5, L7_6, L7_7, L7_8, L7_9, L7_10, L7_11):
    pass


class L6_3(L7_0, L7_1, L7_2, L7_3, L7_4, L7_5, L7_6, L7_7, L7_8, L7_9, L7_10, L7_11):
    pass


class L6_4(L7_0, L7_1, L7_2, L7_3, L7_4, L7_5, L7_6, L7_7, L7_8, L7_9, L7_10, L7_11):
    pass


class L6_5(L7_0, L7_1, L7_2, L7_3, L7_4, L7_5, L7_6, L7_7, L7_8, L7_9, L7_10, L7_11):
    pass


class L6_6(L7_0, L7_1, L7_2, L7_3, L7_4, L7_5, L7_6, L7_7, L7_8, L7_9, L7_10, L7_11):
    pass


class L6_7(L7_0, L7_1, L7_2, L7_3, L7_4, L7_5, L7_6, L7_7, L7_8, L7_9, L7_10, L7_11):
    pass


class L6_8(L7_0, L7_1, L7_2, L7_3, L7_4, L7_5, L7_6, L7_7, L7_8, L7_9, L7_10, L7_11):
    pass


class L6_9(L7_0, L7_1, L7_2, L7_3, L7_4, L7_5, L7_6, L7_7, L7_8, L7_9, L7_10, L7_11):
    pass


class L6_10(L7_0, L7_1, L7_2, L7_3, L7_4, L7_5, L7_6, L7_7, L7_8, L7_9, L7_10, L7_11):
    pass


class L6_11(L7_0, L7_1, L7_2, L7_3, L7_4, L7_5, L7_6, L7_7, L7_8, L7_9, L7_10, L7_11):
    pass


class L5_0(L6_0, L6_1, L6_2, L6_3, L6_4, L6_5, L6_6, L6_7, L6_8, L6_9, L6_10, L6_11):
    pass


class L5_1(L6_0, L6_1, L6_2, L6_3, L6_4, L6_5, L6_6, L6_7, L6_8, L6_9, L6_10, L6_11):
    pass


class L5_2(L6_0, L6_1, L6_2, L6_3, L6_4, L6_5, L6_6, L6_7, L6_8, L6_9, L6_10, L6_11):
    pass


class L5_3(L6_0, L6_1, L6_2, L6_3, L6_4, L6_5, L6_6, L6_7, L6_8, L6_9, L6_10, L6_11):
    pass


class L5_4(L6_0, L6_1, L6_2, L6_3, L6_4, L6_5, L6_6, L6_7, L6_8, L6_9, L6_10, L6_11):
    pass


class L5_5(L6_0, L6_1, L6_2, L6_3, L6_4, L6_5, L6_6, L6_7, L6_8, L6_9, L6_10, L6_11):
    pass


class L5_6(L6_0, L6_1, L6_2, L6_3, L6_4, L6_5, L6_6, L6_7, L6_8, L6_9, L6_10, L6_11):
    pass


class L5_7(L6_0, L6_1, L6_2, L6_3, L6_4, L6_5, L6_6, L6_7, L6_8, L6_9, L6_10, L6_11):
    pass


class L5_8(L6_0, L6_1, L6_2, L6_3, L6_4, L6_5, L6_6, L6_7, L6_8, L6_9, L6_10, L6_11):
    pass


class L5_9(L6_0, L6_1, L6_2, L6_3, L6_4, L6_5, L6_6, L6_7, L6_8, L6_9, L6_10, L6_11):
    pass


class L5_10(L6_0, L6_1, L6_2, L6_3, L6_4, L6_5, L6_6, L6_7, L6_8, L6_9, L6_10, L6_11):
    pass


class L5_11(L6_0, L6_1, L6_2, L6_3, L6_4, L6_5, L6_6, L6_7, L6_8, L6_9, L6_10, L6_11):
    pass


class L4_0(L5_0, L5_1, L5_2, L5_3, L5_4, L5_5, L5_6, L5_7, L5_8, L5_9, L5_10, L5_11):
    pass


class L4_1(L5_0, L5_1, L5_2, L5_3, L5_4, L5_5, L5_6, L5_7, L5_8, L5_9, L5_10, L5_11):
    pass


class L4_2(L5_0, L5_1, L5_2, L5_3, L5_4, L5_5, L5_6, L5_7, L5_8, L5_9, L5_10, L5_11):
    pass


class L4_3(L5_0, L5_1, L5_2, L5_3, L5_4, L5_5, L5_6, L5_7, L5_8, L5_9, L5_10, L5_11):
    pass


class L4_4(L5_0, L5_1, L5_2, L5_3, L5_4, L5_5, L5_6, L5_7, L5_8, L5_9, L5_10, L5_11):
    pass


class L4_5(L5_0, L5_1, L5_2, L5_3, L5_4, L5_5, L5_6, L5_7, L5_8, L5_9, L5_10, L5_11):
    pass


class L4_6(L5_0, L5_1, L5_2, L5_3, L5_4, L5_5, L5_6, L5_7, L5_8, L5_9, L5_10, L5_11):
    pass


class L4_7(L5_0, L5_1, L5_2, L5_3, L5_4, L5_5, L5_6, L5_7, L5_8, L5_9, L5_10, L5_11):
    pass


class L4_8(L5_0, L5_1, L5_2, L5_3, L5_4, L5_5, L5_6, L5_7, L5_8, L5_9, L5_10, L5_11):
    pass


class L4_9(L5_0, L5_1, L5_2, L5_3, L5_4, L5_5, L5_6, L5_7, L5_8, L5_9, L5_10, L5_11):
    pass


class L4_10(L5_0, L5_1, L5_2, L5_3, L5_4, L5_5, L5_6, L5_7, L5_8, L5_9, L5_10, L5_11):
    pass


class L4_11(L5_0, L5_1, L5_2, L5_3, L5_4, L5_5, L5_6, L5_7, L5_8, L5_9, L5_10, L5_11):
    pass


class L3_0(L4_0, L4_1, L4_2, L4_3, L4_4, L4_5, L4_6, L4_7, L4_8, L4_9, L4_10, L4_11):
    pass


class L3_1(L4_0, L4_1, L4_2, L4_3, L4_4, L4_5, L4_6, L4_7, L4_8, L4_9, L4_10, L4_11):
    pass


class L3_2(L4_0, L4_1, L4_2, L4_3, L4_4, L4_5, L4_6, L4_7, L4_8, L4_9, L4_10, L4_11):
    pass


class L3_3(L4_0, L4_1, L4_2, L4_3, L4_4, L4_5, L4_6, L4_7, L4_8, L4_9, L4_10, L4_11):
    pass


class L3_4(L4_0, L4_1, L4_2, L4_3, L4_4, L4_5, L4_6, L4_7, L4_8, L4_9, L4_10, L4_11):
    pass


class L3_5(L4_0, L4_1, L4_2, L4_3, L4_4, L4_5, L4_6, L4_7, L4_8, L4_9, L4_10, L4_11):
    pass


class L3_6(L4_0, L4_1, L4_2, L4_3, L4_4, L4_5, L4_6, L4_7, L4_8, L4_9, L4_10, L4_11):
    pass


class L3_7(L4_0, L4_1, L4_2, L4_3, L4_4, L4_5, L4_6, L4_7, L4_8, L4_9, L4_10, L4_11):
    pass


class L3_8(L4_0, L4_1, L4_2, L4_3, L4_4, L4_5, L4_6, L4_7, L4_8, L4_9, L4_10, L4_11):
    pass


class L3_9(L4_0, L4_1, L4_2, L4_3, L4_4, L4_5, L4_6, L4_7, L4_8, L4_9, L4_10, L4_11):
    pass


class L3_10(L4_0, L4_1, L4_2, L4_3, L4_4, L4_5, L4_6, L4_7, L4_8, L4_9, L4_10, L4_11):
    pass


class L3_11(L4_0, L4_1, L4_2, L4_3, L4_4, L4_5, L4_6, L4_7, L4_8, L4_9, L4_10, L4_11):
    pass


class L2_0(L3_0, L3_1, L3_2, L3_3, L3_4, L3_5, L3_6, L3_7, L3_8, L3_9, L3_10, L3_11):
    pass


class L2_1(L3_0, L3_1, L3_2, L3_3, L3_4, L3_5, L3_6, L3_7, L3_8, L3_9, L3_10, L3_11):
    pass


class L2_2(L3_0, L3_1, L3_2, L3_3, L3_4, L3_5, L3_6, L3_7, L3_8, L3_9, L3_10, L3_11):
    pass


class L2_3(L3_0, L3_1, L3_2, L3_3, L3_4, L3_5, L3_6, L3_7, L3_8, L3_9, L3_10, L3_11):
    pass


class L2_4(L3_0, L3_1, L3_2, L3_3, L3_4, L3_5, L3_6, L3_7, L3_8, L3_9, L3_10, L3_11):
    pass


class L2_5(L3_0, L3_1, L3_2, L3_3, L3_4, L3_5, L3_6, L3_7, L3_8, L3_9, L3_10, L3_11):
    pass


class L2_6(L3_0, L3_1, L3_2, L3_3, L3_4, L3_5, L3_6, L3_7, L3_8, L3_9, L3_10, L3_11):
    pass


class L2_7(L3_0, L3_1, L3_2, L3_3, L3_4, L3_5, L3_6, L3_7, L3_8, L3_9, L3_10, L3_11):
    pass


class L2_8(L3_0, L3_1, L3_2, L3_3, L3_4, L3_5, L3_6, L3_7, L3_8, L3_9, L3_10, L3_11):
    pass


class L2_9(L3_0, L3_1, L3_2, L3_3, L3_4, L3_5, L3_6, L3_7, L3_8, L3_9, L3_10, L3_11):
    pass


class L2_10(L3_0, L3_1, L3_2, L3_3, L3_4, L3_5, L3_6, L3_7, L3_8, L3_9, L3_10, L3_11):
    pass


class L2_11(L3_0, L3_1, L3_2, L3_3, L3_4, L3_5, L3_6, L3_7, L3_8, L3_9, L3_10, L3_11):
    pass


class L1_0(L2_0, L2_1, L2_2, L2_3, L2_4, L2_5, L2_6, L2_7, L2_8, L2_9, L2_10, L2_11):
    pass


class L1_1(L2_0, L2_1, L2_2, L2_3, L2_4, L2_5, L2_6, L2_7, L2_8, L2_9, L2_10, L2_11):
    pass


class L1_2(L2_0, L2_1, L2_2, L2_3, L2_4, L2_5, L2_6, L2_7, L2_8, L2_9, L2_10, L2_11):
    pass


class L1_3(L2_0, L2_1, L2_2, L2_3, L2_4, L2_5, L2_6, L2_7, L2_8, L2_9, L2_10, L2_11):
    pass


class L1_4(L2_0, L2_1, L2_2, L2_3, L2_4, L2_5, L2_6, L2_7, L2_8, L2_9, L2_10, L2_11):
    pass


class L1_5(L2_0, L2_1, L2_2, L2_3, L2_4, L2_5, L2_6, L2_7, L2_8, L2_9, L2_10, L2_11):
    pass


class L1_6(L2_0, L2_1, L2_2, L2_3, L2_4, L2_5, L2_6, L2_7, L2_8, L2_9, L2_10, L2_11):
    pass


class L1_7(L2_0, L2_1, L2_2, L2_3, L2_4, L2_5, L2_6, L2_7, L2_8, L2_9, L2_10, L2_11):
    pass


class L1_8(L2_0, L2_1, L2_2, L2_3, L2_4, L2_5, L2_6, L2_7, L2_8, L2_9, L2_10, L2_11):
    pass


class L1_9(L2_0, L2_1, L2_2, L2_3, L2_4, L2_5, L2_6, L2_7, L2_8, L2_9, L2_10, L2_11):
    pass


class L1_10(L2_0, L2_1, L2_2, L2_3, L2_4, L2_5, L2_6, L2_7, L2_8, L2_9, L2_10, L2_11):
    pass


class L1_11(L2_0, L2_1, L2_2, L2_3, L2_4, L2_5, L2_6, L2_7, L2_8, L2_9, L2_10, L2_11):
    pass


class MultiHeadAttention(L1_0, L1_1, L1_2, L1_3, L1_4, L1_5, L1_6, L1_7, L1_8, L1_9, L1_10, L1_11):
    pass
