// The stress suite's figures: each stress test reports what it tried, how many of those the stack survived (a
// correct result or a clean, named error) and how many were lost (wrong output, a crash, a hang, an error that does
// not name its cause). tools/stress_table.py collects the lines from a run's log into the README's table.
//
// Counts are bounded for CI; BAREGPU_STRESS_SCALE=N (a positive integer) multiplies them for a longer run.
#ifndef BAREGPU_TESTS_STRESS_STRESS_REPORT_H_
#define BAREGPU_TESTS_STRESS_STRESS_REPORT_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace stress {

// BAREGPU_STRESS_SCALE, or 1 when unset or not a positive integer below 10000.
inline uint64_t Scale() {
  const char* text = std::getenv("BAREGPU_STRESS_SCALE");
  if (text == nullptr) return 1;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  return (end != text && *end == '\0' && value > 0 && value < 10000) ? value : 1;
}

// One line per figure, "stress: <what>: tried N, survived N, lost N", on stdout (meson's log keeps it) and as
// GoogleTest properties (the JUnit log keeps them). `what` names the case as the README's table should.
inline void Report(const std::string& what, uint64_t tried, uint64_t survived, uint64_t lost) {
  std::printf("stress: %s: tried %llu, survived %llu, lost %llu\n", what.c_str(),
              static_cast<unsigned long long>(tried), static_cast<unsigned long long>(survived),
              static_cast<unsigned long long>(lost));
  std::fflush(stdout);
  ::testing::Test::RecordProperty("stress_what", what);
  ::testing::Test::RecordProperty("stress_tried", std::to_string(tried));
  ::testing::Test::RecordProperty("stress_survived", std::to_string(survived));
  ::testing::Test::RecordProperty("stress_lost", std::to_string(lost));
}

}  // namespace stress

#endif  // BAREGPU_TESTS_STRESS_STRESS_REPORT_H_
