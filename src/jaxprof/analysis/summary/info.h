// What a profile holds: hosts, devices with their capability stats, lines, event counts, time
// span and the XLA modules seen.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/model/profile.h"

namespace jaxprof {

struct LineInfo {
  std::string name;
  int64_t id = 0;
  uint64_t events = 0;
  int64_t first_ps = 0, last_ps = 0;  // first start, last end
};

struct PlaneInfo {
  std::string name;
  std::string kind;
  std::string host;
  int64_t id = 0;
  uint64_t events = 0;
  std::vector<std::pair<std::string, std::string>> stats;  // capability stats as text
  std::vector<LineInfo> lines;
};

struct ModuleInfo {
  std::string name;
  ProgramId program_id = kNoProgram;
  uint64_t events = 0;      // events attributed to it
  size_t instructions = 0;  // from the HLO index, 0 when unknown
  bool has_hlo = false;
};

struct ProfileInfo {
  std::vector<std::string> hosts;
  std::vector<std::string> files;
  uint64_t events = 0;
  int64_t base_ns = 0;
  int64_t first_ps = 0, last_ps = 0;
  std::vector<PlaneInfo> planes;
  std::vector<ModuleInfo> modules;
  std::vector<std::string> errors, warnings;
};

ProfileInfo compute_info(const Profile& profile);

}  // namespace jaxprof
