"""attnlab's checkpoint file (docs/checkpoint.md) read and written by hand, independently of attnlab's own
C++ reader and writer: the one Python copy of the format that the tests which check what attnlab wrote
(tests/cli/ship_bf16.py), load a model to recompute what a lesson prints (tests/lessons/lesson_claims.py),
or damage a file on purpose (tests/errors/run_cases.py) share.

Layout: "ATNLCKPT", u32 version, u32 reserved, u64 header length, the JSON header, the tensors' bytes
(offsets in the header count from the end of the header), u64 FNV-1a of everything before it.
"""
import json
import struct

MAGIC = b"ATNLCKPT"


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def split(raw):
    """(version, header, tensor bytes, stored FNV-1a) of a checkpoint's bytes; ValueError if not one."""
    if raw[:8] != MAGIC or len(raw) < 32:
        raise ValueError("not an attnlab checkpoint")
    version, _, hlen = struct.unpack_from("<IIQ", raw, 8)
    (stored,) = struct.unpack_from("<Q", raw, len(raw) - 8)
    return version, json.loads(raw[24:24 + hlen]), raw[24 + hlen:len(raw) - 8], stored


def join(header_bytes, tensors, version=1, hlen=None):
    """A checkpoint's bytes from a header and tensor bytes (hlen: a header length to write instead)."""
    out = MAGIC + struct.pack("<II", version, 0)
    out += struct.pack("<Q", len(header_bytes) if hlen is None else hlen) + header_bytes + tensors
    return out + struct.pack("<Q", fnv1a(out))


def params(header, data):
    """{name: float32 array of the tensor's shape} for the "params" group; bf16 tensors (a shipped model,
    format version 2) widened exactly: float32's top 16 bits."""
    import numpy as np
    out = {}
    for t in header["tensors"]:
        if t["group"] != "params":
            continue
        off, count = t["offset"], t["count"]
        if t.get("dtype", "f32") == "bf16":
            halves = np.frombuffer(data, dtype="<u2", count=count, offset=off).astype(np.uint32)
            a = (halves << 16).view(np.float32)
        else:
            a = np.frombuffer(data, dtype="<f4", count=count, offset=off)
        out[t["name"]] = a.reshape(t["shape"])
    return out


def read(path, check_hash_below=2_000_000):
    """(version, header, tensor bytes, params) of the checkpoint at `path`. The FNV-1a trailer is checked
    for files smaller than check_hash_below bytes (pure Python hashes about 1 MB a second)."""
    raw = open(path, "rb").read()
    version, header, data, stored = split(raw)
    if len(raw) < check_hash_below and fnv1a(raw[:-8]) != stored:
        raise ValueError(f"{path}: the FNV-1a trailer does not match")
    return version, header, data, params(header, data)
