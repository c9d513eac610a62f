// Opens a fresh virtual Navi31 through HCQ for each test, in the binary's own state directory.
#ifndef BAREGPU_TESTS_HCQ_HCQ_FIXTURE_H_
#define BAREGPU_TESTS_HCQ_HCQ_FIXTURE_H_

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hcq/device.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/sim_state_dir.h"

namespace hcq::testing {

inline std::unique_ptr<Device> OpenFresh(const std::string& name = "sim:navi31:hcq", DeviceOptions options = {}) {
  EXPECT_TRUE(pci::sim::PersistentState::PowerCycle(name).ok());
  auto device = Device::Open(name, options);
  EXPECT_TRUE(device.ok()) << device.status();
  return device.ok() ? std::move(*device) : nullptr;
}

class HcqTest : public ::testing::Test {
 protected:
  virtual DeviceOptions Options() { return {}; }
  void SetUp() override {
    dev_ = OpenFresh("sim:navi31:hcq", Options());
    ASSERT_NE(dev_, nullptr);
  }
  void TearDown() override { dev_.reset(); }

  std::unique_ptr<Device> dev_;
};

}  // namespace hcq::testing

#endif  // BAREGPU_TESTS_HCQ_HCQ_FIXTURE_H_
