// "Is this change beyond the noise between processes": with several captures per side, each
// capture is summarised by its median per-execution time and the summaries are compared with
// Welch's t-test on their logarithms. Two processes running the same program differ by a fixed
// amount in steady state (where buffers land, which cores they get), so the executions of one
// capture are not independent samples of the program's speed; the captures are.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace jaxprof {

// Upper tail P(T > t) of Student's t distribution with `df` > 0 degrees of freedom.
double student_t_upper(double t, double df);

// The t with P(T > t) = p, 0 < p < 1.
double student_t_quantile_upper(double p, double df);

struct CaptureTest {
  bool tested = false;    // false: fewer than 2 captures in all, or a side without any
  bool log_scale = true;  // false when some summary is <= 0: the difference of means is tested
  size_t base_captures = 0, new_captures = 0;
  // log_scale: the mean of log(new) - log(base) less log(scale), and exp of it plus log(scale) is
  // the ratio of geometric means; otherwise mean(new) - scale * mean(base).
  double estimate = 0;
  double se = 0, df = 0, t = 0;
  double p_greater = 1;  // one-sided: NEW > BASE * scale
  double p_less = 1;     // one-sided: NEW < BASE * scale
  double p_two_sided = 1;
  double ratio = 0;                      // geometric mean of NEW / of BASE (log_scale only)
  double ratio_low = 0, ratio_high = 0;  // its interval (log_scale only)
  // The variances of the two terms of se^2 (BASE's weighted by scale^2 on the linear scale), after
  // a single capture took the other side's spread: what more captures would divide.
  double var_base = 0, var_new = 0;
};

// Welch's t-test of NEW against BASE * scale over per-capture summaries. When one side has a
// single capture, its variance is taken to be the other side's (degrees of freedom of that side
// alone): the spread between processes is a property of the machine, not of the program. The
// interval leaves `tail` on each side (0.025: the 95% interval).
CaptureTest capture_t_test(std::span<const double> base, std::span<const double> now,
                           double scale = 1.0, double tail = 0.025);

// Welch-Satterthwaite degrees of freedom of se^2 = var_base / n_base + var_new / n_new, where a
// side with one capture (n = 1) lends the other side's degrees of freedom.
double welch_df(double var_base, double n_base, double var_new, double n_new);

// Per-capture medians of samples laid out capture after capture (`sizes` executions each);
// captures without executions are left out.
std::vector<double> capture_medians(std::span<const double> samples, std::span<const size_t> sizes);

}  // namespace jaxprof
