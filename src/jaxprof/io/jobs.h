// Independent pieces of input decoding (decompressing and parsing archive members) run on a few
// threads while the caller goes on with work that needs their results only later.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace jaxprof {

class Jobs {
 public:
  Jobs() = default;
  Jobs(const Jobs&) = delete;
  Jobs& operator=(const Jobs&) = delete;
  // Stops handing out jobs and waits for the running ones.
  ~Jobs();

  // Adds a job before start(); `cost` orders them (largest first, so that the longest one does not
  // start last). Returns its handle for wait().
  size_t add(size_t cost, std::function<void()> fn);
  // Starts `threads` - 1 workers (the caller is the last one, in wait()); 1 runs everything in
  // wait() on the calling thread.
  void start(unsigned threads);
  // Returns when job `i` has run, running pending jobs meanwhile; rethrows the job's exception.
  void wait(size_t i);

 private:
  struct Job {
    size_t cost;
    std::function<void()> fn;
    std::atomic<bool> done{false};
    std::exception_ptr error;
  };
  bool run_next();  // runs one pending job; false when none is left

  std::vector<std::unique_ptr<Job>> jobs_;
  std::vector<size_t> order_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
};

}  // namespace jaxprof
