#include "jaxprof/analysis/ops/memory_op.h"

#include <gtest/gtest.h>

#include "jaxprof/analysis/ops/category.h"

namespace jaxprof {
namespace {

TEST(MemoryOp, StatBits) {
  EXPECT_EQ(memory_op_of_stat_bits(0), MemoryOp::kNone);
  EXPECT_EQ(memory_op_of_stat_bits(Events::kMemcpyStat), MemoryOp::kMemcpy);
  EXPECT_EQ(memory_op_of_stat_bits(Events::kMemsetStat), MemoryOp::kMemset);
}

TEST(MemoryOp, StreamLinesThatCarryOnlyCopiesOrFills) {
  EXPECT_EQ(memory_op_of_line_name("Stream #12(MemcpyOther)"), MemoryOp::kMemcpy);
  EXPECT_EQ(memory_op_of_line_name("Stream #7(MemcpyH2D,MemcpyD2H)"), MemoryOp::kMemcpy);
  EXPECT_EQ(memory_op_of_line_name("Stream #3(Memset)"), MemoryOp::kMemset);
  // Kernels run there too, or both kinds: the line cannot say.
  EXPECT_EQ(memory_op_of_line_name("Stream #7(Kernel,MemcpyD2D)"), MemoryOp::kNone);
  EXPECT_EQ(memory_op_of_line_name("Stream #7(MemcpyD2D,Memset)"), MemoryOp::kNone);
  EXPECT_EQ(memory_op_of_line_name("Stream #7()"), MemoryOp::kNone);
  EXPECT_EQ(memory_op_of_line_name("XLA Ops"), MemoryOp::kNone);
}

TEST(MemoryOp, Opcodes) {
  EXPECT_EQ(memory_op_of_opcode("copy"), MemoryOp::kMemcpy);
  EXPECT_EQ(memory_op_of_opcode("copy-start"), MemoryOp::kMemcpy);
  EXPECT_EQ(memory_op_of_opcode("copy-done"), MemoryOp::kMemcpy);
  EXPECT_EQ(memory_op_of_opcode("dynamic-update-slice"), MemoryOp::kNone);
  EXPECT_EQ(memory_op_of_opcode("fusion"), MemoryOp::kNone);
  EXPECT_EQ(memory_op_of_opcode(""), MemoryOp::kNone);
}

TEST(MemoryOp, Names) {
  EXPECT_EQ(memory_op_of_name("CopyDeviceToDevice"), MemoryOp::kMemcpy);
  EXPECT_EQ(memory_op_of_name("MemcpyH2D"), MemoryOp::kMemcpy);
  EXPECT_EQ(memory_op_of_name("Memcpy HtoD (Pageable -> Device)"), MemoryOp::kMemcpy);
  EXPECT_EQ(memory_op_of_name("Memset (Device)"), MemoryOp::kMemset);
  EXPECT_EQ(memory_op_of_name("__amd_rocclr_copyBuffer.kd"), MemoryOp::kMemcpy);
  EXPECT_EQ(memory_op_of_name("__amd_rocclr_fillBufferAligned.kd"), MemoryOp::kMemset);
  EXPECT_EQ(memory_op_of_name("MEMORY_COPY_DEVICE_TO_HOST"), MemoryOp::kMemcpy);
  EXPECT_EQ(memory_op_of_name("loop_add_fusion"), MemoryOp::kNone);
  EXPECT_EQ(memory_op_of_name("%copy-done.4 = f32[8] copy-done(...)"), MemoryOp::kNone);
}

TEST(MemoryOp, CategoriesFollowTheSameRules) {
  EXPECT_EQ(categorize({}, "CopyDeviceToDevice"), OpCategory::kMemcpy);
  EXPECT_EQ(categorize("copy-done", "copy-done.4"), OpCategory::kMemcpy);
  // With the HLO known, the opcode decides, not the name.
  EXPECT_NE(categorize("fusion", "copy_fusion"), OpCategory::kMemcpy);
  EXPECT_NE(categorize("dynamic-update-slice", "dynamic-update-slice.1"), OpCategory::kMemcpy);
}

}  // namespace
}  // namespace jaxprof
