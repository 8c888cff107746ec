"""The protobuf wire format, by hand: enough to read, edit and write XSpace, HloProto and partial
files without generated code. Shared by the tests, the benchmarks and the fuzz seed builder, so
that one codec, not one per script, is trusted to be right (the C++ reader is checked against it
and against the protobuf package).

    sys.path.insert(0, str(ROOT / "scripts")); import protowire as pw
"""
from __future__ import annotations

from typing import Callable, Iterator, Optional, Tuple, Union

VARINT, I64, LEN, I32 = 0, 1, 2, 5

Value = Union[int, bytes]


def read_varint(buf: bytes, i: int) -> Tuple[int, int]:
    """The varint at buf[i:] and the offset just past it."""
    result = shift = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7


def varint(v: int) -> bytes:
    """A varint; negative values as their 64-bit two's complement (as int64 fields are)."""
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def zigzag(v: int) -> bytes:
    """A sint64 value (zigzag encoded)."""
    return varint((v << 1) ^ (v >> 63))


def signed(v: int) -> int:
    """A varint read back as int64."""
    return v - (1 << 64) if v >= 1 << 63 else v


def fields(buf: bytes) -> Iterator[Tuple[int, int, Value, bytes]]:
    """(field number, wire type, value, the field's whole bytes) for each field of a message:
    an int for varints, bytes for the others."""
    i, n = 0, len(buf)
    while i < n:
        start = i
        key, i = read_varint(buf, i)
        number, wire_type = key >> 3, key & 7
        if wire_type == VARINT:
            value, i = read_varint(buf, i)
        elif wire_type == I64:
            value, i = buf[i:i + 8], i + 8
        elif wire_type == LEN:
            length, i = read_varint(buf, i)
            value, i = buf[i:i + length], i + length
        elif wire_type == I32:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"unsupported wire type {wire_type} at byte {start}")
        yield number, wire_type, value, buf[start:i]


def len_field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | LEN) + varint(len(payload)) + bytes(payload)


def int_field(number: int, value: int) -> bytes:
    return varint(number << 3 | VARINT) + varint(value)


def field(number: int, wire_type: int, value: Value) -> bytes:
    """One field of any wire type, as fields() yields it."""
    if wire_type == VARINT:
        return int_field(number, value)  # type: ignore[arg-type]
    if wire_type == LEN:
        return len_field(number, value)  # type: ignore[arg-type]
    return varint(number << 3 | wire_type) + bytes(value)  # type: ignore[arg-type]


def rewrite(message: bytes, edit: Callable[[int, int, Value], Optional[Value]]) -> bytes:
    """The message with each field passed through edit(number, wire_type, value), which returns
    the new value (of the same wire type) or None to drop the field."""
    out = bytearray()
    for number, wire_type, value, _ in fields(message):
        new = edit(number, wire_type, value)
        if new is not None:
            out += field(number, wire_type, new)
    return bytes(out)
