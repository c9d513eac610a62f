// Gives a test binary its own directory for virtual device state, so that test binaries running in parallel
// never share a device and a run never sees state left by an earlier one; and its own runtime directory, so that
// their devices' debug endpoints (serve/debug_endpoint.h) never meet either: a second process serving a device of
// the same name probes the first one's endpoint, whose thread then runs a session in the middle of the first
// binary's test.
#ifndef BAREGPU_TESTS_AM_SIM_SIM_STATE_DIR_H_
#define BAREGPU_TESTS_AM_SIM_SIM_STATE_DIR_H_

#include <stdlib.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace am::sim::testing {

class SimStateDirEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    char pattern[] = "/tmp/baregpu-sim-test-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    ::setenv("BAREGPU_SIM_DIR", dir_.c_str(), 1);
    char runtime_pattern[] = "/tmp/baregpu-run-test-XXXXXX";  // mode 0700, as the endpoint requires
    runtime_dir_ = ::mkdtemp(runtime_pattern);
    ::setenv("BAREGPU_RUNTIME_DIR", runtime_dir_.c_str(), 1);
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "' '" + runtime_dir_ + "'").c_str()); }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::string runtime_dir_;
};

// Registers the environment once per binary: `static auto* env = RegisterSimStateDir();` at namespace scope.
inline SimStateDirEnvironment* RegisterSimStateDir() {
  auto* env = new SimStateDirEnvironment();
  ::testing::AddGlobalTestEnvironment(env);
  return env;
}

}  // namespace am::sim::testing

#endif  // BAREGPU_TESTS_AM_SIM_SIM_STATE_DIR_H_
