// Whole-word matching in kernel, op and custom-call names: "loop_convert_fusion" holds the words
// loop, convert and fusion, so it says "convert" but never "conv". Words are the runs of ASCII
// letters and digits, compared without case.
#pragma once

#include <initializer_list>
#include <string_view>

namespace jaxprof {

// Calls f(word) for each word of `text` until f returns true; returns whether one did.
template <typename F>
bool any_word(std::string_view text, F&& f) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !alnum(text[i])) ++i;
    size_t j = i;
    while (j < text.size() && alnum(text[j])) ++j;
    if (j > i && f(text.substr(i, j - i))) return true;
    i = j;
  }
  return false;
}

inline bool same_word(std::string_view word, std::string_view lower) {
  if (word.size() != lower.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    char c = word[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

inline bool word_starts_with(std::string_view word, std::string_view lower) {
  return word.size() >= lower.size() && same_word(word.substr(0, lower.size()), lower);
}

inline bool word_ends_with(std::string_view word, std::string_view lower) {
  return word.size() >= lower.size() && same_word(word.substr(word.size() - lower.size()), lower);
}

// Whether `text` holds one of `words` (given in lower case) as a whole word.
inline bool has_word(std::string_view text, std::initializer_list<std::string_view> words) {
  return any_word(text, [&](std::string_view w) {
    for (std::string_view x : words)
      if (same_word(w, x)) return true;
    return false;
  });
}

}  // namespace jaxprof
