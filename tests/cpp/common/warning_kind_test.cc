#include "jaxprof/common/warning_kind.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace jaxprof {

TEST(WarningKind, ManyOfAKindInAModuleAreOneLine) {
  const WarningKind& k = kNoHloForCollective;
  std::vector<std::string> w = {"first", k.text("jit_a", "all-reduce.1"), "middle",
                                k.text("jit_a", "all-reduce.2"), k.text("jit_b", "all-gather"),
                                k.text("jit_a", "all-reduce.3")};
  std::vector<std::string> lines = summarise_warnings(w);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "first");
  EXPECT_TRUE(lines[1].starts_with("no HLO for 3 collectives of jit_a: their message sizes"));
  EXPECT_NE(lines[1].find("(e.g. jit_a/all-reduce.1; --verbose lists them all)"),
            std::string::npos);
  EXPECT_EQ(lines[2], "middle");
  // One of its kind in its module reads as it always did.
  EXPECT_EQ(lines[3], "no HLO for jit_b/all-gather: message size and bandwidth unknown");
}

}  // namespace jaxprof
