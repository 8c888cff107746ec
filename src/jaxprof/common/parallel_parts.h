// Independent parts of one analysis on their own threads. The parts read a finished Profile
// (const: lines decoded beforehand, stats read from the file) and write only their own results,
// so they need no locks; the caller merges the results in part order, which keeps the output the
// same for any number of parts.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace jaxprof {

// How many threads analyses may use: 0 = one per core. `split_small_work`: as many even for a
// little work (tests use it to run the parallel paths on small profiles).
// Aligned to its size so that std::atomic of it is lock-free with clang too (which otherwise calls
// libatomic).
struct alignas(8) AnalysisThreads {
  unsigned threads = 0;
  bool split_small_work = false;
};
inline std::atomic<AnalysisThreads> analysis_threads{AnalysisThreads{}};

// How many parts `work` units are worth: one per `per_part` units, at least 1, at most the
// threads allowed.
inline size_t parts_for(uint64_t work, uint64_t per_part) {
  AnalysisThreads limit = analysis_threads.load();
  uint64_t most = limit.threads ? limit.threads : std::max(1u, std::thread::hardware_concurrency());
  if (limit.split_small_work) return static_cast<size_t>(most);
  return static_cast<size_t>(std::clamp<uint64_t>(work / std::max<uint64_t>(per_part, 1), 1, most));
}

// Runs fn(0) .. fn(parts - 1), part 0 on the calling thread; returns when all have finished,
// rethrowing the first failed part's exception (in part order).
template <typename Fn>
void run_parts(size_t parts, Fn&& fn) {
  std::vector<std::exception_ptr> errors(parts);
  {
    std::vector<std::jthread> pool;
    pool.reserve(parts);
    for (size_t i = 1; i < parts; ++i)
      pool.emplace_back([&, i] {
        try {
          fn(i);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    try {
      if (parts > 0) fn(size_t{0});
    } catch (...) {
      errors[0] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

// Runs fn(i, thread) for every item i on up to `threads` threads (numbered from 0), each taking
// the next item when it is done with one, costliest first (so that a long item does not start
// last). When items fail, the error of the lowest-numbered one is rethrown once all have run:
// the same error whatever the number of threads.
template <typename Fn>
void for_each_parallel(const std::vector<uint64_t>& costs, size_t threads, Fn&& fn) {
  std::vector<size_t> order(costs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return costs[a] > costs[b]; });
  std::vector<std::exception_ptr> errors(costs.size());
  std::atomic<size_t> next{0};
  run_parts(std::min(threads, order.size()), [&](size_t thread) {
    for (size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < order.size();) {
      try {
        fn(order[k], thread);
      } catch (...) {
        errors[order[k]] = std::current_exception();
      }
    }
  });
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace jaxprof
