"""The binary framing of `convert_dumps.py --serve` answers (docs/check-run.md, "Scale").

A dump step holds millions of token ids, loss-mask bits and per-token floats. As JSON they cost more to
write, send and parse than torch takes to load them, so each answer is one JSON header line followed by
raw bytes: every long list of Python ints that fits in int32 ("i32"), or of finite floats (and ints) as
float64 ("f64"), goes out as a little-endian block, and the header's document holds null in its place and
a `blobs` entry {path, type, offset, count} saying where it goes. Everything else stays JSON. The reader
(replay/run-check/dump-frames.ts) puts plain number arrays back at those paths, so the document it gets
is the one the JSON path gives (same values; JSON does not tell 1 from 1.0 to the reader either).

Lists that cannot be framed exactly stay JSON: shorter than MIN_LENGTH, bools (JSON writes true), ints
beyond int32, any non-finite float (JSON turns it into null and counts it).
"""

import json
import math
import sys
from array import array

# Below this a list costs less as JSON than its blob entry.
MIN_LENGTH = 32
ALIGN = 8  # every block starts at a multiple of 8, so the reader can view it as Float64Array in place


class Packer:
    """Collects one answer's blocks; `pack` says whether it took the list (its place in the JSON is null)."""

    def __init__(self):
        self.blobs = []
        self.chunks = []
        self.size = 0

    def pack(self, values, path):
        if len(values) < MIN_LENGTH:
            return False
        kinds = set(map(type, values))
        if kinds == {int}:
            code, kind = "i", "i32"
        elif float in kinds and kinds <= {int, float}:
            code, kind = "d", "f64"
        else:
            return False
        try:
            block = array(code, values)
        except OverflowError:  # an int beyond int32 (or beyond a double): JSON keeps it exact
            return False
        if code == "d" and not math.isfinite(sum(block)):
            # A non-finite element makes the sum non-finite; the JSON path nulls and counts it.
            return False
        if sys.byteorder == "big":
            block.byteswap()
        pad = -self.size % ALIGN
        if pad:
            self.chunks.append(bytes(pad))
            self.size += pad
        # The array itself is written (buffer protocol): tobytes() would copy every block once more.
        self.blobs.append({"path": list(path), "type": kind, "offset": self.size, "count": len(block)})
        self.chunks.append(block)
        self.size += len(block) * block.itemsize
        return True

    def write(self, stdout, header):
        """Writes the answer: the header (with `blobs` and `bytes`) as one JSON line, then the blocks (not
        joined first: a step's blocks are tens of MB, the converter's peak memory is its largest answer)."""
        stdout.write(header_line({**header, "blobs": self.blobs, "bytes": self.size}))
        for chunk in self.chunks:
            stdout.write(chunk)
        self.chunks = []


def header_line(header):
    return json.dumps(header, allow_nan=False, separators=(",", ":")).encode("utf-8") + b"\n"


assert array("i").itemsize == 4 and array("d").itemsize == 8
