// One call from paths on the command line to a ready Profile.
#pragma once

#include <string>
#include <vector>

#include "jaxprof/formats/xplane/xplane.h"
#include "jaxprof/io/discover.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

struct LoadOptions {
  std::string session;             // for log directories; empty = newest
  std::vector<std::string> hosts;  // empty = all hosts of the session
  ImportOptions import;
};

struct LoadedProfile {
  Profile profile;
  ProfileFiles files;  // what was read (sessions found, hosts, HLO files)
};

// `paths`: one profile (file or directory) plus any number of *.hlo.pb / *.hlo_proto.pb files, or
// several XSpace files (one per host). Throws InputError.
void load_profile(const std::vector<std::string>& paths, const LoadOptions& options,
                  LoadedProfile& out);

// Adds an HloProto (or bare HloModuleProto) file to the profile's HLO index.
void load_hlo_file(Profile& profile, const std::string& path);

}  // namespace jaxprof
