// Identifiers in text tables: printed as their digits, never through a double.
#include <gtest/gtest.h>

#include <string>

#include "jaxprof/render/text/text.h"

namespace jaxprof {
namespace {

TEST(TextTable, ProgramIdsKeepEveryDigit) {
  Table t({{"module"}, {"program_id", Measure::kLabel}});
  t.add({"jit__psum", Cell::id(9646411105960254074ULL)});
  t.add({"jit_f", Cell::id(7)});
  std::string out = t.render(60);
  EXPECT_NE(out.find("9646411105960254074"), std::string::npos) << out;
  EXPECT_EQ(out.find("9646411105960253440"), std::string::npos) << out;
  // Right-aligned as numbers are: both rows end at the same column.
  auto row = [&](const std::string& name) {
    size_t at = out.find(name);
    return out.substr(at, out.find('\n', at) - at);
  };
  EXPECT_EQ(row("jit_f").size(), row("jit__psum").size()) << out;
  EXPECT_EQ(row("jit_f").back(), '7') << out;
}

}  // namespace
}  // namespace jaxprof
