"""``xla_module_metadata``: a program's HLO as nsys-jax's notebook reads it (instructions with
``opcode``, ``metadata.op_name``, ``metadata.stack_frame_id``, ``called_computation_ids``;
computations with ``instructions``; stack frames), from the HLO the profile carries or the
archive's dump, decoded by jaxprof's core (no protobuf package or compiled .proto files)."""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from ... import _core
from ._source import current_profile


class StackFrame(NamedTuple):
    file: str
    function: str
    line: int
    column: int = 0

    def __str__(self) -> str:
        column = f":{self.column}" if self.column else ""
        return f"{self.file}:{self.line}{column} ({self.function})"


def _instruction(d: Dict[str, Any]) -> Any:
    metadata = SimpleNamespace(op_name=d["op_name"], op_type=d["op_type"],
                               source_file=d["source_file"], source_line=d["source_line"],
                               stack_frame_id=d["stack_frame_id"])
    groups = [SimpleNamespace(replica_ids=g) for g in d["replica_groups"]]
    return SimpleNamespace(name=d["name"], opcode=d["opcode"], id=d["id"], metadata=metadata,
                           operand_ids=d["operand_ids"],
                           called_computation_ids=d["called_computation_ids"],
                           replica_groups=groups, computation_id=d["computation_id"])


class HloModuleMetadata:
    """One program's HLO module: look-ups by instruction name, instruction id and computation
    id, and stack frames by id."""

    def __init__(self, module: Dict[str, Any]) -> None:
        self.name: str = module["name"]
        self.program_id: int = module["program_id"]
        instructions = [_instruction(i) for i in module["instructions"]]
        by_name = {i.name: i for i in instructions}
        self._computations: Dict[int, Any] = {}
        for c in module["computations"]:
            self._computations[c["id"]] = SimpleNamespace(
                name=c["name"], id=c["id"], root_id=c["root_id"],
                instructions=[by_name[n] for n in c["instructions"]])
        self._by_name = {i.name: (self._computations.get(i.computation_id), i)
                         for i in instructions}
        self._by_id = {i.id: pair for pair in self._by_name.values() for i in [pair[1]]}
        self._frames = module["stack_frames"]

    def find_computation(self, id: int) -> Any:
        return self._computations[id]

    def find_instruction(self, name: str) -> Tuple[Any, Any]:
        """``(computation, instruction)`` of the instruction named ``name``."""
        return self._by_name[name]

    def find_instruction_by_id(self, id: int) -> Tuple[Any, Any]:
        return self._by_id[id]

    def get_stack_frames(self, frame_id: int) -> List[StackFrame]:
        """The stack ending at frame ``frame_id``, outermost caller first; [] for 0."""
        frames: List[StackFrame] = []
        while 0 < frame_id <= len(self._frames):
            file, function, line, column, parent = self._frames[frame_id - 1]
            frames.append(StackFrame(file, function, line, column))
            frame_id = parent
        frames.reverse()
        return frames


_cache: Dict[Tuple[int, int], HloModuleMetadata] = {}


def xla_module_metadata(program_id: int, prefix: Optional[Any] = None) -> HloModuleMetadata:
    """The HLO module of ``program_id`` in the profile ``load_profiler_data`` read (or the one
    at ``prefix``). Raises KeyError when the profile holds no HLO for it."""
    p = current_profile(prefix)
    key = (id(p), int(program_id))
    if key not in _cache:
        module = _core.hlo_module(p._core, int(program_id))
        if module is None:
            raise KeyError(f"no HLO module for program id {program_id} in the profile")
        _cache[key] = HloModuleMetadata(module)
    return _cache[key]


def compile_protos(proto_dir: Any = "protos", output_dir: Any = "compiled_protos") -> None:
    """Nothing to compile: jaxprof decodes the HLO itself. Makes ``output_dir`` so that code
    that checks for it carries on."""
    del proto_dir
    os.makedirs(output_dir, exist_ok=True)
