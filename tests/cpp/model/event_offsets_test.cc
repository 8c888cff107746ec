// Events' offsets in their plane past 4 GiB: the high bits are kept only once a plane needs them,
// and they move with their event when a line is put in order.
#include <gtest/gtest.h>

#include "jaxprof/formats/line_order.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {
namespace {

TEST(EventOffsets, NarrowUntilAPlaneNeedsMore) {
  Events ev;
  ev.resize(2);
  ev.raw[0] = 7;
  ev.raw[1] = 0xffffffffu;
  EXPECT_FALSE(ev.wide);
  EXPECT_TRUE(ev.raw_high.empty());  // no column for the high bits
  EXPECT_EQ(ev.raw_offset(1), 0xffffffffu);

  ev.make_wide();  // a plane of 4 GiB or more: the events so far keep their offsets
  EXPECT_EQ(ev.raw_offset(0), 7u);
  EXPECT_EQ(ev.raw_offset(1), 0xffffffffu);
  ev.resize(4, /*uninitialised=*/true);
  ev.raw[2] = 5;
  ev.raw_high[2] = 1;  // 4 GiB + 5
  ev.raw[3] = 9;
  ev.raw_high[3] = 0;
  EXPECT_EQ(ev.raw_offset(2), (uint64_t{1} << 32) + 5);
  EXPECT_EQ(ev.raw_offset(3), 9u);
}

TEST(EventOffsets, HighBitsMoveWithTheirEventsWhenALineIsSorted) {
  Events ev;
  ev.make_wide();
  ev.resize(3);
  const int64_t start[] = {30, 10, 20};
  const uint64_t offset[] = {(uint64_t{2} << 32) + 1, (uint64_t{1} << 32) + 2, 3};
  for (int i = 0; i < 3; ++i) {
    ev.start_ps[i] = start[i];
    ev.duration_ps[i] = 1;
    ev.raw[i] = static_cast<uint32_t>(offset[i]);
    ev.raw_high[i] = static_cast<uint32_t>(offset[i] >> 32);
  }
  sort_line_events(ev, 0, 3, {});
  EXPECT_EQ(ev.start_ps[0], 10);
  EXPECT_EQ(ev.raw_offset(0), offset[1]);
  EXPECT_EQ(ev.raw_offset(1), offset[2]);
  EXPECT_EQ(ev.raw_offset(2), offset[0]);
}

}  // namespace
}  // namespace jaxprof
