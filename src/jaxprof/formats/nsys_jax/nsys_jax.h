// nsys-jax archives (`*.zip` from NVIDIA's nsys-jax / nsys-jax-combine): NVTX ranges that Nsight
// Systems projected onto the GPU timeline, thread names, and XLA's HLO dumps.
//
// Mapping onto the Profile: each `XlaModule:#hlo_module=NAME,program_id=N#` range with at least
// one thunk is a module execution; the innermost `Thunk:#hlo_op=NAME#` ranges under it are the ops
// (NCCL ranges in between are dropped and their children re-parented). The device comes from the
// launching thread's name (`XlaLauncher:#global=G,...#`; the main thread drives the first device
// listed, as nsys-jax assumes). Each device becomes a plane `/device:GPU:G` with a line
// "XLA Modules" and a line "XLA Thunks" (the op line), and the GPU's description from
// `device-metadata.parquet` as plane stats; each profiled process is a host. HLO dumps
// (`dump/module_NNNN.NAME.*after_optimizations.hlo.pb.xz`) go into the HLO index under program id
// NNNN. Combined archives (nsys-jax-combine) hold one member per process as `path/<stem>`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "jaxprof/formats/xplane/xplane.h"
#include "jaxprof/io/buffer.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

// True when the file looks like a zip archive (by its first bytes).
bool is_zip_file(const std::string& path);

// Imports every process of the archive. `host` names the host of a single-process archive (the
// archive's stem); processes of combined archives are named by their member stems. Throws
// InputError naming the archive (and member) for anything malformed or missing.
void import_nsys_jax(Profile& profile, std::shared_ptr<Buffer> archive, const std::string& host,
                     const ImportOptions& options = {});

// Puts the processes of several nsys-jax archives on one clock, as nsys-jax does: each host is
// moved by the median skew of its collectives' end times from their mean over devices
// (formats/nsys_jax/collective_alignment.h). Call after finish_import; returns the correction per host (ps).
std::vector<int64_t> align_nsys_jax_clocks(Profile& profile);

}  // namespace jaxprof
