// How the XSpace importer spreads its work over threads: the lines and chunks of one file with
// parallel_for, whole files with parallel_for_in_order. Neither shares anything with the work
// but the counter handing out items.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <type_traits>
#include <vector>

namespace jaxprof::xspace_import {

// Runs fn(i, worker) for i in [0, n) on `threads` threads (fn(i) also works); rethrows the first
// exception.
template <typename Fn>
void parallel_for(unsigned threads, size_t n, Fn&& fn) {
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> errors(threads);
  auto work = [&](unsigned t) {
    try {
      for (size_t i; (i = next.fetch_add(1)) < n;) {
        if constexpr (std::is_invocable_v<Fn, size_t, unsigned>)
          fn(i, t);
        else
          fn(i);
      }
    } catch (...) {
      errors[t] = std::current_exception();
      next.store(n);
    }
  };
  if (threads == 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work, t);
    for (auto& th : pool) th.join();
  }
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

// Runs fn(i) for i in [0, n) on `threads` threads, rethrowing the exception of the first i
// that failed. Items are handed out in order: when one fails, the earlier ones are already taken
// and finish, and no later one starts, so the error is the one a sequential run reports.
template <typename Fn>
void parallel_for_in_order(unsigned threads, size_t n, Fn&& fn) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    for (size_t i; !failed.load() && (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
        failed.store(true);
      }
    }
  };
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
    for (auto& th : pool) th.join();
  }
  for (size_t i = 0; i < n; ++i)
    if (errors[i]) std::rethrow_exception(errors[i]);
}

}  // namespace jaxprof::xspace_import
