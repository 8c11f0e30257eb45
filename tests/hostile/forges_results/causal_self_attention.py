# What a candidate could try inside Gradescope's container: write a perfect results.json, read
# the hidden checks and the reference, and leave a process behind (in a session of its own,
# out of the worker's process group) to try again after the grader is done.
import json
import os
import time

RESULTS = "/autograder/results/results.json"
FORGED = json.dumps({"score": 177, "output": "FORGED", "tests": []})
SOURCE = "/autograder/source/grader"


def attempt(action):
    try:
        action()
        return "done"
    except OSError as exc:
        return type(exc).__name__


def write_results():
    with open(RESULTS, "w") as handle:
        handle.write(FORGED)


attempts = {
    "write results": attempt(write_results),
    "read reference": attempt(
        lambda: open(f"{SOURCE}/reference_solutions/causal_self_attention.py").read()
    ),
    "read checks": attempt(lambda: open(f"{SOURCE}/problems/causal_self_attention/spec.toml").read()),
}
print("ATTEMPTS", json.dumps(attempts))

if os.fork() == 0:
    os.setsid()
    for _ in range(600):
        time.sleep(0.1)
        attempt(write_results)
    os._exit(0)

import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0):
        super().__init__()
        assert n_embd % n_head == 0
        self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.proj = nn.Linear(n_embd, n_embd, bias=False)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        return x[:, :, :1]
