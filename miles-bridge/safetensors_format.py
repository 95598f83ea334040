"""An independent writer and reader of the safetensors container, for machines without the `safetensors`
Python package (Debian ships none). It follows the format as the reference library
(huggingface/safetensors, `prepare`/`serialize` in safetensors/src/tensor.rs) writes it:

- an 8-byte little-endian header length, then the JSON header, then the tensor data;
- tensors ordered by dtype, the larger dtype first (the reference's `Dtype` order: ... U8 < I8 < ... < I32 <
  U32 < F32 < F64 < I64 < U64), then by name (byte order);
- the header is compact JSON: `__metadata__` first when given (a str -> str map), then each tensor as
  `{"dtype", "shape", "data_offsets": [begin, end]}` in data order;
- the header is padded with spaces to a multiple of 8 bytes;
- data is little-endian and contiguous, each tensor right after the previous one.

Only the dtypes Miles' samples wire uses (and their neighbours) are known here.
"""

import json
import struct

import numpy as np

# The reference library's dtype order (its Rust enum order), smallest to largest.
DTYPE_ORDER = ["BOOL", "U8", "I8", "I16", "U16", "F16", "I32", "U32", "F32", "F64", "I64", "U64"]
NUMPY_TO_SAFETENSORS = {
    np.dtype(np.bool_): "BOOL",
    np.dtype(np.uint8): "U8",
    np.dtype(np.int8): "I8",
    np.dtype(np.int16): "I16",
    np.dtype(np.uint16): "U16",
    np.dtype(np.float16): "F16",
    np.dtype(np.int32): "I32",
    np.dtype(np.uint32): "U32",
    np.dtype(np.float32): "F32",
    np.dtype(np.float64): "F64",
    np.dtype(np.int64): "I64",
    np.dtype(np.uint64): "U64",
}
SAFETENSORS_TO_NUMPY = {v: k for k, v in NUMPY_TO_SAFETENSORS.items()}


class SafetensorError(Exception):
    """Raised for an invalid container, like the reference library's error of that name."""


def save(tensors: dict, metadata: dict | None = None) -> bytes:
    """`safetensors.numpy.save`: serialize named numpy arrays to bytes."""
    entries = []
    for name, array in tensors.items():
        dtype = NUMPY_TO_SAFETENSORS.get(np.dtype(array.dtype))
        if dtype is None:
            raise SafetensorError(f"unsupported dtype {array.dtype} for tensor {name}")
        data = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        entries.append((name, dtype, [int(d) for d in array.shape], data))
    entries.sort(key=lambda e: (-DTYPE_ORDER.index(e[1]), e[0].encode("utf-8")))
    header: dict = {}
    if metadata is not None:
        # The reference keeps `__metadata__` in a hash map (no fixed key order); sorted here.
        header["__metadata__"] = {str(k): str(v) for k, v in sorted(metadata.items())}
    offset = 0
    for name, dtype, shape, data in entries:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    header_bytes = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    header_bytes += b" " * ((8 - len(header_bytes) % 8) % 8)
    return struct.pack("<Q", len(header_bytes)) + header_bytes + b"".join(e[3] for e in entries)


def load(payload: bytes) -> dict:
    """`safetensors.numpy.load`: named numpy arrays from bytes, refusing a malformed container."""
    if len(payload) < 8:
        raise SafetensorError("HeaderTooSmall")
    (header_len,) = struct.unpack("<Q", payload[:8])
    if header_len > len(payload) - 8:
        raise SafetensorError("InvalidHeaderLength")
    try:
        header = json.loads(payload[8 : 8 + header_len].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise SafetensorError(f"InvalidHeaderDeserialization: {exc}") from exc
    data = payload[8 + header_len :]
    out = {}
    spans = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = SAFETENSORS_TO_NUMPY.get(info["dtype"])
        if dtype is None:
            raise SafetensorError(f"unsupported dtype {info['dtype']}")
        begin, end = info["data_offsets"]
        shape = info["shape"]
        if end - begin != int(np.prod(shape, dtype=np.int64)) * dtype.itemsize:
            raise SafetensorError(f"TensorInvalidInfo: {name}")
        spans.append((begin, end))
        out[name] = np.frombuffer(data[begin:end], dtype=dtype.newbyteorder("<")).astype(dtype).reshape(shape)
    cursor = 0
    for begin, end in sorted(spans):
        if begin != cursor:
            raise SafetensorError("InvalidOffset")
        cursor = end
    if cursor != len(data):
        raise SafetensorError("MetadataIncompleteBuffer")
    return out
