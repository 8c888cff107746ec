#include "jaxprof/model/share_guard.h"

#include <gtest/gtest.h>

namespace jaxprof {

TEST(ShareGuard, ClipsAboveOneAndNamesTheLargest) {
  ShareGuard g;
  EXPECT_DOUBLE_EQ(g(1, 4, "a"), 0.25);
  EXPECT_DOUBLE_EQ(g(5, 0, "b"), 0);  // no whole: no share
  EXPECT_FALSE(g.clipped());
  EXPECT_EQ(g.warning("x"), "");
  EXPECT_DOUBLE_EQ(g(3, 2, "c"), 1.0);
  ShareGuard other;
  EXPECT_DOUBLE_EQ(other(2, 1, "d"), 1.0);
  g.merge(other);
  EXPECT_EQ(g.warning("busy"),
            "2 shares above 100% shown as 100% (the largest: d, 200.0% of busy): events counted "
            "more than once (overlapping lines of one device, or several devices' work read as "
            "one)");
}

}  // namespace jaxprof
