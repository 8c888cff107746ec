// The check of JSON members the Chrome trace importer does not read (json_value_check.h).
#include "jaxprof/formats/chrome_trace/json_value_check.h"

#include <gtest/gtest.h>

#include <string>

namespace jaxprof {
namespace {

TEST(JsonValueCheck, AcceptsEveryKindOfValue) {
  for (const char* ok : {"0", "-0", "12", "-1.5e+3", "2E-7", "0.25", "true", "false", "null",
                         R"("")", R"("a\"b\\c\/\b\f\n\r\t\u00e9")", "\xc3\xa9", "{}", "[]",
                         R"({"a":[1,{"b":null}],"c":"}"})", " [ 1 , 2 ] ", "[[[]]]"}) {
    std::string text = ok;
    if (text == "\xc3\xa9") text = "\"\xc3\xa9\"";  // UTF-8 passes through (simdjson checks it)
    EXPECT_TRUE(is_json_value(text)) << text;
  }
}

TEST(JsonValueCheck, RefusesWhatIsNotOneValue) {
  for (const char* bad : {"",
                          " ",
                          "tru",
                          "nul",
                          "truex",
                          "01",
                          "1.",
                          ".5",
                          "-",
                          "1e",
                          "+1",
                          "7false",
                          R"("open)",
                          R"("bad \x escape")",
                          R"("\u12")",
                          "\"a\tb\"",
                          "{",
                          "[",
                          "}",
                          "]",
                          "{]",
                          "[}",
                          "[1,]",
                          "[,1]",
                          R"({"a"})",
                          R"({"a":1,})",
                          R"({"a" 1})",
                          R"({1:2})",
                          R"({"a":1 "b":2})",
                          "1 2",
                          R"("7false{" ph)",
                          "[1] x"}) {
    EXPECT_FALSE(is_json_value(bad)) << bad;
  }
}

TEST(JsonValueCheck, DeepNestingNeedsNoRecursion) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_TRUE(is_json_value(deep));
  EXPECT_FALSE(is_json_value(deep.substr(0, deep.size() - 1)));
}

}  // namespace
}  // namespace jaxprof
