#include "jaxprof/common/escape.h"

#include <gtest/gtest.h>

#include <string>

namespace jaxprof {
namespace {

TEST(Escape, JsonStringsKeepPlainRunsAndEscapeTheRest) {
  EXPECT_EQ(json_string(""), "\"\"");
  EXPECT_EQ(json_string("fusion.3"), "\"fusion.3\"");
  EXPECT_EQ(json_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json_string("\n\r\t"), "\"\\n\\r\\t\"");
  EXPECT_EQ(json_string(std::string("x\x01y\x7fz", 5)), "\"x\\u0001y\\u007fz\"");
  EXPECT_EQ(json_string("caf\xc3\xa9!"), "\"caf\xc3\xa9!\"");  // valid UTF-8 kept
  EXPECT_EQ(json_string("a\xff"
                        "b"),
            "\"a\\ufffdb\"");                                // an invalid byte replaced
  EXPECT_EQ(json_string("\xe2\x82"), "\"\\ufffd\\ufffd\"");  // cut short
  std::string out = "[";
  append_json_string(out, "end\"");
  EXPECT_EQ(out, "[\"end\\\"\"");
}

}  // namespace
}  // namespace jaxprof
