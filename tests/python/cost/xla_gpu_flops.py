"""The FLOPs XLA's GPU cost model (`GpuHloCostAnalysis`) gives a fusion, as XProf's Roofline tool
counts them, written from its definition so that the tests can state where jaxprof differs.

XProf builds the GPU model without a device description, so every GPU (the MI300X included) gets
the default per-element table, the one XLA measured on sm_86:

- an elementwise op costs `cycles(opcode, element type)` FLOPs per output element: the measured
  clock cycles where the table has the pair (transcendentals: f32 sine and cosine 662, sqrt 75,
  ...), else 3 (every add, multiply, subtract, divide, maximum, compare, select and convert);
  transcendentals are FLOPs there and the `transcendentals` count stays 0;
- `reduce` costs (input - output elements) x its reducer's FLOPs, as in XLA's generic model;
- broadcast, bitcast, parameter and constant cost nothing;
- inside a fusion each instruction is weighted by how often the fused kernel computes it: an
  elementwise chain is recomputed once for every non-elementwise consumer it feeds (a convert read
  by a reduce and by a subtract counts twice).

jaxprof counts every elementwise op once per element, and the transcendental ones apart
(docs/roofline.md), so on elementwise work without transcendentals or recomputation the two
differ by exactly 3x.
"""
from __future__ import annotations

import math
import re
from typing import Dict, List, Optional

# XLA's sm_86 table (hlo_op_profiles_data.h) as XProf 2.24 links it: f32 clock cycles per element.
SM86_F32_CYCLES = {
    "cbrt": 867, "cosine": 662, "exponential": 86, "exponential-minus-one": 381, "log": 244,
    "log-plus-one": 262, "logistic": 176, "rsqrt": 75, "sine": 662, "sqrt": 75, "tanh": 190,
    "atan2": 486, "power": 925,
}
DEFAULT_CYCLES = 3  # "elementwise instructions typically take at least a few clock cycles"

ELEMENTWISE = {
    "abs", "add", "and", "atan2", "cbrt", "ceil", "clamp", "compare", "convert", "cosine",
    "divide", "exponential", "exponential-minus-one", "floor", "is-finite", "log", "log-plus-one",
    "logistic", "maximum", "minimum", "multiply", "negate", "not", "or", "power", "remainder",
    "round-nearest-afz", "round-nearest-even", "rsqrt", "select", "sign", "sine", "sqrt",
    "subtract", "tan", "tanh", "xor",
}
TRANSCENDENTAL = {"cbrt", "cosine", "exponential", "exponential-minus-one", "log", "log-plus-one",
                  "logistic", "power", "rsqrt", "sine", "sqrt", "tan", "tanh", "atan2", "erf"}
FREE = {"broadcast", "bitcast", "parameter", "constant", "reshape", "tuple", "get-tuple-element"}

_INSTR = re.compile(r"^\s*(ROOT\s+)?([\w.\-]+)\s*=\s*(\w+)\[([\d,]*)\](?:\{[^}]*\})?\s+"
                    r"([\w\-]+)\(([^)]*)\)(.*)$")


class Instr:
    def __init__(self, name, dtype, dims, opcode, operands, attrs):
        self.name, self.dtype, self.opcode, self.attrs = name, dtype, opcode, attrs
        self.elements = math.prod(int(d) for d in dims.split(",") if d) if dims else 1
        self.operands = [o.strip().split()[-1] for o in operands.split(",") if o.strip()]


def parse_computations(text: str) -> Dict[str, List[Instr]]:
    """HLO text -> {computation name: instructions in order}."""
    comps: Dict[str, List[Instr]] = {}
    current: Optional[List[Instr]] = None
    for line in text.splitlines():
        head = re.match(r"^(?:ENTRY\s+)?([\w.\-]+)\s*(?:\([^)]*\)\s*->\s*\S+\s*)?\{\s*$", line)
        if head:
            current = comps.setdefault(head.group(1), [])
            continue
        if line.strip() == "}":
            current = None
            continue
        m = _INSTR.match(line)
        if m and current is not None:
            current.append(Instr(m.group(2), m.group(3), m.group(4), m.group(5), m.group(6),
                                 m.group(7)))
    return comps


def cycles(opcode: str, dtype: str) -> int:
    if dtype == "f32":
        return SM86_F32_CYCLES.get(opcode, DEFAULT_CYCLES)
    return DEFAULT_CYCLES


def _own_flops(ins: Instr, by_name: Dict[str, Instr], comps) -> float:
    if ins.opcode in ELEMENTWISE:
        return cycles(ins.opcode, ins.dtype) * ins.elements
    if ins.opcode == "reduce":
        reducer = re.search(r"to_apply=([\w.\-]+)", ins.attrs).group(1)
        per_apply = sum(_own_flops(i, {}, comps) for i in comps[reducer])
        return (by_name[ins.operands[0]].elements - ins.elements) * per_apply
    if ins.opcode in FREE:
        return 0
    raise ValueError(f"no GPU model written here for {ins.opcode} ({ins.name})")


def utilization(instrs: List[Instr]) -> Dict[str, float]:
    """How many times the fused kernel computes each instruction. Values are computed once per
    "root": the fusion's result and every operand of a non-elementwise instruction (reduce,
    broadcast); an elementwise instruction is recomputed for each distinct root it feeds."""
    roots: Dict[str, set] = {i.name: set() for i in instrs}
    root_util: Dict[str, float] = {i.name: 0.0 for i in instrs}
    last = instrs[-1].name
    roots[last].add(last)
    root_util[last] = 1.0
    util: Dict[str, float] = {}
    for i in reversed(instrs):  # in HLO text every user comes after its operands
        util[i.name] = sum(root_util[r] for r in roots[i.name])
        for o in i.operands:
            if o not in roots:
                continue
            if i.opcode in ELEMENTWISE:
                roots[o] |= roots[i.name]
            else:
                roots[o].add(o)
                root_util[o] += util[i.name]
    return util


def fusion_flops(comps: Dict[str, List[Instr]], computation: str) -> float:
    """FLOPs of one execution of the fused computation, recomputation included."""
    instrs = comps[computation]
    by_name = {i.name: i for i in instrs}
    util = utilization(instrs)
    return sum(util[i.name] * _own_flops(i, by_name, comps) for i in instrs)


def _fused(text: str, op: str):
    comps = parse_computations(text)
    for instrs in comps.values():
        for i in instrs:
            if i.name == op and i.opcode == "fusion":
                return comps, re.search(r"calls=([\w.\-]+)", i.attrs).group(1)
    return None


def op_flops(text: str, op: str) -> float:
    """FLOPs of the entry instruction `op` (a fusion) of the module in `text`."""
    found = _fused(text, op)
    if found is None:
        raise KeyError(op)
    return fusion_flops(*found)


def elementwise_kinds(text: str, op: str) -> List[str]:
    """The elementwise opcodes inside fusion `op` (what the FLOP difference depends on)."""
    found = _fused(text, op)
    if found is None:
        return []
    comps, called = found
    return sorted({i.opcode for i in comps[called] if i.opcode in ELEMENTWISE})


def recomputes(text: str, op: str) -> bool:
    """Whether fusion `op` computes some instruction more than once per element."""
    comps, called = _fused(text, op)
    return any(u > 1 for u in utilization(comps[called]).values())
