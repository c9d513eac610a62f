// NV_STATUS codes as absl::Status (nv/rm/nv_status.h). The codes' values are nvstatuscodes.h's (nv/regs).
#include "nv/rm/nv_status.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nv/regs/status_constants.h"

namespace nv::rm {
namespace {

using namespace regs::status;  // NOLINT

TEST(NvStatusTest, LabelsNameTheCode) {
  EXPECT_EQ(NvStatusLabel(NV_ERR_INVALID_CLASS), "NV_ERR_INVALID_CLASS (0x22)");
  EXPECT_EQ(NvStatusLabel(0x1f), "NV_ERR_INVALID_ARGUMENT (0x1f)");
  EXPECT_EQ(NvStatusLabel(0xabcdef), "0xabcdef");  // not in nvstatuscodes.h
}

TEST(NvStatusTest, OkIsOk) {
  EXPECT_TRUE(NvStatusError(NV_OK, "anything").ok());
  EXPECT_EQ(NvStatusCode(NV_OK), absl::StatusCode::kOk);
}

TEST(NvStatusTest, ErrorsCarryTheNumberAndTheName) {
  absl::Status status = NvStatusError(NV_ERR_INSUFFICIENT_RESOURCES, "allocating the channel");
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(), "allocating the channel: NV_ERR_INSUFFICIENT_RESOURCES (0x1a)");
  EXPECT_EQ(NvStatusOf(status), NV_ERR_INSUFFICIENT_RESOURCES);
  // An unknown code keeps its number too.
  absl::Status unknown = NvStatusError(0xdead, "x");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(unknown.message(), "x: 0xdead");
  EXPECT_EQ(NvStatusOf(unknown), 0xdeadu);
}

TEST(NvStatusTest, CodesMapToTheirCounterparts) {
  EXPECT_EQ(NvStatusCode(NV_ERR_NO_MEMORY), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(NvStatusCode(NV_ERR_INVALID_OBJECT_HANDLE), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(NvStatusCode(NV_ERR_OBJECT_NOT_FOUND), absl::StatusCode::kNotFound);
  EXPECT_EQ(NvStatusCode(NV_ERR_NOT_SUPPORTED), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(NvStatusCode(NV_ERR_INSERT_DUPLICATE_NAME), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(NvStatusCode(NV_ERR_TIMEOUT), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(NvStatusCode(NV_ERR_BUSY_RETRY), absl::StatusCode::kUnavailable);
  EXPECT_EQ(NvStatusCode(NV_ERR_INVALID_STATE), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(NvStatusCode(NV_ERR_GENERIC), absl::StatusCode::kInternal);
}

TEST(NvStatusTest, OtherErrorsCarryNone) {
  EXPECT_FALSE(NvStatusOf(absl::DeadlineExceededError("GSP-RM did not answer")).has_value());
  EXPECT_FALSE(NvStatusOf(absl::OkStatus()).has_value());
  absl::Status forged = absl::InternalError("x");
  forged.SetPayload(kNvStatusPayload, absl::Cord("zz"));
  EXPECT_FALSE(NvStatusOf(forged).has_value());
}

}  // namespace
}  // namespace nv::rm
