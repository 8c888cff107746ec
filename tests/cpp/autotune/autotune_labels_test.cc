// Label extraction on the places labels appear: HLO op_name metadata, StableHLO locations, and
// names XLA cut at "@"; glued prefixes are not labels.
#include <gtest/gtest.h>

#include "jaxprof/autotune/labels.h"
#include "jaxprof/common/error.h"

namespace jaxprof {
namespace {

TEST(AutotuneLabels, FindsAndDeduplicates) {
  std::string text =
      R"(%dot.1 = dot(...), metadata={op_name="jit(f)/jaxprof_ops#matmul@v2:f32_8x8_ab/dot"}
#loc3 = loc("jit(f)/jaxprof_ops#matmul@v2:f32_8x8_ab/dot_general"(#loc1))
%t = tanh(...), metadata={op_name="jit(f)/jaxprof_ops#softmax.v10:k=1+2/exp"}
%c = dot(...), metadata={op_name="jit(f)/jaxprof_ops#attn"}
%x = add(...), metadata={op_name="jit(f)/notjaxprof_ops#fake@v1:z"})";
  auto got = extract_labels(text);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].op, "matmul");
  EXPECT_EQ(got[0].version, 2);
  EXPECT_EQ(got[0].call_key, "f32_8x8_ab");
  EXPECT_EQ(got[0].occurrences, 2u);
  EXPECT_EQ(got[0].op_id(), "matmul@v2");
  EXPECT_EQ(got[1].op, "softmax");
  EXPECT_EQ(got[1].version, 10);
  EXPECT_EQ(got[1].call_key, "k=1+2");
  EXPECT_EQ(got[2].op, "attn");
  EXPECT_FALSE(got[2].complete());
  EXPECT_EQ(got[2].op_id(), "attn");
}

TEST(AutotuneLabels, PrefixAndBinaryInput) {
  std::string bytes("\x0a\x05jit_f\x12\x1cjit(f)/ejkernel_ops#mm@v3:abc", 38);
  bytes.push_back('\0');
  auto got = extract_labels(bytes, "ejkernel_ops");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].op_id(), "mm@v3");
  EXPECT_TRUE(extract_labels(bytes).empty());
  EXPECT_THROW(extract_labels("x", ""), InputError);
  EXPECT_THROW(extract_labels("x", "a#b"), InputError);
}

}  // namespace
}  // namespace jaxprof
