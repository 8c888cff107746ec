#include "jaxprof/io/jobs.h"

#include <algorithm>
#include <numeric>

namespace jaxprof {

Jobs::~Jobs() {
  stop_ = true;
  for (std::thread& t : workers_) t.join();
}

size_t Jobs::add(size_t cost, std::function<void()> fn) {
  auto job = std::make_unique<Job>();
  job->cost = cost;
  job->fn = std::move(fn);
  jobs_.push_back(std::move(job));
  return jobs_.size() - 1;
}

void Jobs::start(unsigned threads) {
  order_.resize(jobs_.size());
  std::iota(order_.begin(), order_.end(), size_t{0});
  std::stable_sort(order_.begin(), order_.end(),
                   [&](size_t a, size_t b) { return jobs_[a]->cost > jobs_[b]->cost; });
  size_t workers = std::min<size_t>(threads > 0 ? threads - 1 : 0, jobs_.size());
  for (size_t t = 0; t < workers; ++t)
    workers_.emplace_back([this] {
      while (!stop_ && run_next()) {
      }
    });
}

bool Jobs::run_next() {
  size_t k = next_++;
  if (k >= order_.size()) return false;
  Job& job = *jobs_[order_[k]];
  try {
    job.fn();
  } catch (...) {
    job.error = std::current_exception();
  }
  job.done = true;
  job.done.notify_all();
  return true;
}

void Jobs::wait(size_t i) {
  Job& job = *jobs_[i];
  // Jobs are handed out in one order, so running pending ones reaches job i or finds it taken.
  while (!job.done && run_next()) {
  }
  job.done.wait(false);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace jaxprof
