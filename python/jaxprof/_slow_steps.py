"""Telling a slow training step from the others, cheaply enough to run on every step.

The wall time of a step is the time from its start to the start of the next one: everything the
loop does per step (input pipeline, Python, dispatch, waiting for the device). The recent steps'
median is the reference; a step is slow when it took ``factor`` times that median (or when a
predicate says so). A few microseconds per step, nothing profiled: one clock read and the median
of at most ``window`` numbers.
"""

from __future__ import annotations

import collections
import statistics
from dataclasses import dataclass
from typing import Callable, Deque, Optional, Union

# predicate(step_num, seconds, median_seconds) -> bool
SlowStepPredicate = Callable[[int, float, float], bool]


@dataclass(frozen=True)
class SlowStep:
    """A step the watch flagged: its number, wall time and the recent median it was held to."""

    step_num: int
    seconds: float
    median_s: float

    def describe(self) -> str:
        ratio = self.seconds / self.median_s if self.median_s > 0 else float("inf")
        return (f"slow step {self.step_num}: {self.seconds * 1e3:.2f} ms, "
                f"{ratio:.1f}x the median {self.median_s * 1e3:.2f} ms")


class SlowStepWatch:
    """Running distribution of step wall times: the last ``window`` steps that were measured
    cleanly (no capture started, ran or stopped in them)."""

    def __init__(self, rule: Union[float, SlowStepPredicate], window: int = 50,
                 min_history: int = 10) -> None:
        if not callable(rule) and not (isinstance(rule, (int, float)) and rule > 1):
            raise ValueError("on_slow_step must be a factor > 1 or a callable "
                             "(step_num, seconds, median_seconds) -> bool")
        if window < 3 or not 3 <= min_history <= window:
            raise ValueError("slow_step_window must be >= 3 and hold min_history steps")
        self.rule = rule
        self.min_history = min_history
        self.times: Deque[float] = collections.deque(maxlen=window)
        self._median: Optional[float] = None

    @property
    def median_s(self) -> Optional[float]:
        if len(self.times) < self.min_history:
            return None
        if self._median is None:
            self._median = statistics.median(self.times)
        return self._median

    def observe(self, step_num: int, seconds: float) -> Optional[SlowStep]:
        """Adds one clean step; returns it when it is slow against the steps before it."""
        median = self.median_s
        slow = None
        if median is not None:
            if callable(self.rule):
                fired = bool(self.rule(step_num, seconds, median))
            else:
                fired = seconds > float(self.rule) * median
            if fired:
                slow = SlowStep(step_num, seconds, median)
        self.times.append(seconds)
        self._median = None
        return slow
