// base/log: level names, the threshold, and what reaches stderr.
#include "base/log.h"

#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace base {
namespace {

TEST(LogTest, ParsesEveryLevelInAnyCaseAndNamesTheAcceptedOnes) {
  EXPECT_EQ(*ParseLogLevel("off"), LogLevel::kOff);
  EXPECT_EQ(*ParseLogLevel("ERROR"), LogLevel::kError);
  EXPECT_EQ(*ParseLogLevel("Warn"), LogLevel::kWarn);
  EXPECT_EQ(*ParseLogLevel("info"), LogLevel::kInfo);
  EXPECT_EQ(*ParseLogLevel("debug"), LogLevel::kDebug);
  absl::StatusOr<LogLevel> bad = ParseLogLevel("loud");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("off, error, warn, info, debug"), std::string::npos) << bad.status();
}

TEST(LogTest, WritesOnlyAtOrBelowTheThreshold) {
  SetLogLevel(LogLevel::kInfo);
  EXPECT_TRUE(LogEnabled(LogLevel::kError));
  EXPECT_TRUE(LogEnabled(LogLevel::kInfo));
  EXPECT_FALSE(LogEnabled(LogLevel::kDebug));
  ::testing::internal::CaptureStderr();
  BAREGPU_LOG(kInfo, "opened %s", "sim:navi31");
  BAREGPU_LOG(kDebug, "not shown %d", 1);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "baregpu info: opened sim:navi31\n");
  SetLogLevel(LogLevel::kOff);
  EXPECT_FALSE(LogEnabled(LogLevel::kError));
}

}  // namespace
}  // namespace base
