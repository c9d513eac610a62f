// The GSP transport (nv/rm/gsp_transport.h) against a scripted GSP-RM: the virtual GSP's end of the message queues
// (nv/sim/gsp_message_queue.h) over host memory at scattered bus addresses, so every request and reply really
// crosses the queues. The responder answers each case with reply bytes written out here by hand, as GSP-RM answers
// (the request structure echoed with the status and the parameters filled in: RM's rpcRmApiAlloc_GSP /
// rpcRmApiControl_GSP read them back from the reply so; nouveau's r535_gsp_rpc_rm_alloc_push /
// r535_gsp_rpc_rm_ctrl_push likewise).
//
// Request layouts by hand (g_rpc-structures.h): rpc_gsp_rm_alloc_v03_00 is hClient, hParent, hObject, hClass, status,
// paramsSize, flags, reserved[4] (8 words), the parameters at byte 32; rpc_gsp_rm_control_v03_00 is hClient, hObject,
// cmd, status, paramsSize, flags (6 words), the parameters at 24; rpc_free_v03_00 is NVOS00_PARAMETERS_v03_00 hRoot,
// hObjectParent, hObjectOld, status (4 words).
#include "nv/rm/gsp_transport.h"

#include <cstring>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nv/gsp/message_queue.h"
#include "nv/regs/rpc_constants.h"
#include "nv/regs/status_constants.h"
#include "nv/rm/classes.h"
#include "nv/rm/client.h"
#include "nv/rm/nv_status.h"
#include "nv/rm/params.h"
#include "nv/sim/gsp_message_queue.h"
#include "tests/nv/sim/host_device_memory.h"

namespace nv::rm {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using namespace regs::rpc;     // NOLINT: RPC numbers as the headers spell them
using namespace regs::status;  // NOLINT: NV_STATUS codes likewise

constexpr Handle kClient = 0xc1d00000;
constexpr Handle kDevice = 0xcf000000;
constexpr Handle kVaSpace = 0xcf000002;
constexpr Handle kSubdevice = 0xcf000001;
constexpr absl::Duration kShortTimeout = absl::Milliseconds(20);

// Little-endian words as bytes, and back.
std::vector<uint8_t> Bytes(std::initializer_list<uint32_t> words) {
  std::vector<uint8_t> bytes(words.size() * 4);
  std::memcpy(bytes.data(), std::data(words), bytes.size());
  return bytes;
}
std::vector<uint32_t> Words(const std::vector<uint8_t>& bytes) {
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}
void Append(std::vector<uint8_t>& to, const std::vector<uint8_t>& bytes) {
  to.insert(to.end(), bytes.begin(), bytes.end());
}

class GspTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    region_.MapInto(memory_);
    auto queue = gsp::MessageQueue::Create(region_.bytes(), region_.bus, [this] { OnDoorbell(); });
    ASSERT_TRUE(queue.ok()) << queue.status();
    queue_ = std::move(*queue);
    queue_->set_event_handler([this](const gsp::GspMessage& m) { events_.push_back(m.function); });
    ASSERT_TRUE(gsp_.Start(queue_->init_arguments())) << gsp_.errors().front();
  }

  // GSP-RM's side: every whole command is recorded and answered by the case's script (nothing when it has none).
  void OnDoorbell() {
    while (std::optional<sim::GspCommand> command = gsp_.ReadCommand()) {
      commands_.push_back(*command);
      if (respond_) respond_(*command);
    }
  }
  void Reply(const sim::GspCommand& command, uint32_t rpc_result, const std::vector<uint8_t>& payload) {
    ASSERT_TRUE(gsp_.WriteReply(command, rpc_result, payload).ok());
  }

  sim::testing::HostDeviceMemory memory_;
  sim::testing::ScatteredRegion region_{0x81};
  sim::GspMessageQueue gsp_{memory_};
  std::unique_ptr<gsp::MessageQueue> queue_;
  std::function<void(const sim::GspCommand&)> respond_;
  std::vector<sim::GspCommand> commands_;
  std::vector<uint32_t> events_;
};

// FERMI_VASPACE_A under the device, NV_VASPACE_ALLOCATION_PARAMETERS (48 bytes: index, flags, vaSize, vaStartInternal,
// vaLimitInternal, bigPageSize + pad, vaBase) with flags ENABLE_PAGE_FAULTING (BIT(6)) and bigPageSize 64 KiB.
// GSP-RM writes back vaSize 0x2000000000000 and vaBase 0x200000 (the [out] members, nvos.h).
TEST_F(GspTransportTest, AllocSendsTheRequestAndCopiesTheParametersBack) {
  respond_ = [this](const sim::GspCommand& command) {
    std::vector<uint8_t> reply = Bytes({kClient, kDevice, kVaSpace, 0x90f1, NV_OK, 48, 0, 0});
    Append(reply, Bytes({0, 0x40, 0, 0x20000, 0, 0, 0, 0, 0x10000, 0, 0x200000, 0}));
    Reply(command, NV_OK, reply);
  };
  NV_VASPACE_ALLOCATION_PARAMETERS params{};
  params.flags = 0x40;
  params.bigPageSize = 0x10000;
  GspTransport transport(*queue_);
  absl::StatusOr<Handle> made =
      transport.Alloc(kClient, kDevice, kVaSpace, FERMI_VASPACE_A, std::span(reinterpret_cast<uint8_t*>(&params), 48));
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(*made, kVaSpace);

  ASSERT_EQ(commands_.size(), 1u);
  EXPECT_EQ(commands_[0].function, NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC);
  EXPECT_EQ(commands_[0].records, 1u);
  EXPECT_THAT(Words(commands_[0].payload),
              ElementsAre(kClient, kDevice, kVaSpace, 0x90f1, 0, 48, 0, 0,  // rpc_gsp_rm_alloc_v03_00
                          0, 0x40, 0, 0, 0, 0, 0, 0, 0x10000, 0, 0, 0));    // the parameters
  EXPECT_EQ(params.vaSize, 0x2000000000000u);
  EXPECT_EQ(params.vaBase, 0x200000u);
  EXPECT_EQ(params.flags, 0x40u);
  EXPECT_TRUE(events_.empty());
  EXPECT_TRUE(gsp_.errors().empty());
}

// NV2080_CTRL_CMD_GPU_GET_GID_INFO (0x2080014a, ctrl2080gpu.h) on the subdevice: NV2080_CTRL_GPU_GET_GID_INFO_PARAMS
// (268 bytes: index, flags, length, data[256]) with flags FORMAT_BINARY (2); GSP-RM answers length 16 and the UUID.
TEST_F(GspTransportTest, ControlSendsTheRequestAndCopiesTheParametersBack) {
  respond_ = [this](const sim::GspCommand& command) {
    std::vector<uint8_t> reply = Bytes({kClient, kSubdevice, 0x2080014a, NV_OK, 268, 0});
    Append(reply, Bytes({0, 2, 16}));
    std::vector<uint8_t> data(256);
    for (int i = 0; i < 16; ++i) data[i] = static_cast<uint8_t>(0xa0 + i);
    Append(reply, data);
    Reply(command, NV_OK, reply);
  };
  gsp::NV2080_CTRL_GPU_GET_GID_INFO_PARAMS params{};
  params.flags = 2;
  GspTransport transport(*queue_);
  ASSERT_TRUE(
      transport.Control(kClient, kSubdevice, 0x2080014a, std::span(reinterpret_cast<uint8_t*>(&params), 268)).ok());
  ASSERT_EQ(commands_.size(), 1u);
  EXPECT_EQ(commands_[0].function, NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL);
  ASSERT_EQ(commands_[0].payload.size(), 24u + 268u);
  const std::vector<uint32_t> words = Words(commands_[0].payload);
  EXPECT_THAT(std::vector<uint32_t>(words.begin(), words.begin() + 9),
              ElementsAre(kClient, kSubdevice, 0x2080014a, 0, 268, 0,  // rpc_gsp_rm_control_v03_00
                          0, 2, 0));                                   // index, flags, length
  EXPECT_EQ(params.length, 16u);
  EXPECT_EQ(params.data[0], 0xa0);
  EXPECT_EQ(params.data[15], 0xaf);
  EXPECT_EQ(params.data[16], 0);
}

TEST_F(GspTransportTest, FreeSendsNoParentAsNouveauAndRmDo) {
  respond_ = [this](const sim::GspCommand& command) { Reply(command, NV_OK, Bytes({kClient, 0, kVaSpace, NV_OK})); };
  GspTransport transport(*queue_);
  ASSERT_TRUE(transport.Free(kClient, kDevice, kVaSpace).ok());
  ASSERT_EQ(commands_.size(), 1u);
  EXPECT_EQ(commands_[0].function, NV_VGPU_MSG_FUNCTION_FREE);
  EXPECT_THAT(Words(commands_[0].payload), ElementsAre(kClient, 0, kVaSpace, 0));  // hRoot, hObjectParent, ..Old
}

TEST_F(GspTransportTest, AFailedAllocNamesTheObjectTheClassAndTheStatus) {
  // ADA_COMPUTE_A with no parameters; GSP-RM fails the RPC (rpc_result) and says why in the parameters' status.
  respond_ = [this](const sim::GspCommand& command) {
    Reply(command, NV_ERR_INVALID_CLASS, Bytes({kClient, kDevice, 0xcf000005, 0xc9c0, NV_ERR_INVALID_CLASS, 0, 0, 0}));
  };
  GspTransport transport(*queue_);
  absl::StatusOr<Handle> made = transport.Alloc(kClient, kDevice, 0xcf000005, ADA_COMPUTE_A, {});
  EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(made.status().message(),
              HasSubstr("NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC of object 0xcf000005 (class ADA_COMPUTE_A (0xc9c0), parent "
                        "0xcf000000, client 0xc1d00000) failed: NV_ERR_INVALID_CLASS (0x22)"));
  EXPECT_EQ(NvStatusOf(made.status()), NV_ERR_INVALID_CLASS);
}

TEST_F(GspTransportTest, AFailedAllocTakesTheParametersStatusOverRpcResult) {
  // rpcRmApiAlloc_GSP returns rpc_params->status when the RPC failed; rpc_result is named beside it.
  respond_ = [this](const sim::GspCommand& command) {
    std::vector<uint8_t> reply = Bytes({kClient, kClient, kDevice, 0x80, NV_ERR_NO_MEMORY, 56, 0, 0});
    Append(reply, std::vector<uint8_t>(56));
    Reply(command, NV_ERR_INVALID_ARGUMENT, reply);
  };
  NV0080_ALLOC_PARAMETERS params{};
  params.hClientShare = kClient;
  GspTransport transport(*queue_);
  absl::StatusOr<Handle> made =
      transport.Alloc(kClient, kClient, kDevice, NV01_DEVICE_0, std::span(reinterpret_cast<uint8_t*>(&params), 56));
  EXPECT_EQ(made.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(made.status().message(),
              HasSubstr("failed (rpc_result NV_ERR_INVALID_ARGUMENT (0x1f)): NV_ERR_NO_MEMORY (0x51)"));
  EXPECT_EQ(NvStatusOf(made.status()), NV_ERR_NO_MEMORY);
  EXPECT_EQ(params.hClientShare, kClient);  // nothing copied back
}

TEST_F(GspTransportTest, AControlThatFailsInItsHandlerCopiesNothingBack) {
  // The RPC went through (rpc_result NV_OK); the control's own status is NV_ERR_NOT_SUPPORTED, and the reply's
  // parameters are not taken (rpcRmApiControl_GSP skips the copy-out without COPYOUT_ON_ERROR).
  respond_ = [this](const sim::GspCommand& command) {
    Reply(command, NV_OK, Bytes({kClient, kSubdevice, 0xa06c0101, NV_ERR_NOT_SUPPORTED, 4, 0, 0xffffffff}));
  };
  uint32_t params = 1;
  GspTransport transport(*queue_);
  absl::Status status =
      transport.Control(kClient, kSubdevice, 0xa06c0101, std::span(reinterpret_cast<uint8_t*>(&params), 4));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(status.message(), HasSubstr("NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL command 0xa06c0101 on object 0xcf000001 "
                                          "(client 0xc1d00000) failed: NV_ERR_NOT_SUPPORTED (0x56)"));
  EXPECT_EQ(NvStatusOf(status), NV_ERR_NOT_SUPPORTED);
  EXPECT_EQ(params, 1u);
}

TEST_F(GspTransportTest, AFailedFreeNamesTheStatus) {
  respond_ = [this](const sim::GspCommand& command) {
    Reply(command, NV_ERR_OBJECT_NOT_FOUND, Bytes({kClient, 0, kVaSpace, NV_ERR_OBJECT_NOT_FOUND}));
  };
  GspTransport transport(*queue_);
  absl::Status status = transport.Free(kClient, kDevice, kVaSpace);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("NV_VGPU_MSG_FUNCTION_FREE of object 0xcf000002 (parent 0xcf000000, client "
                                          "0xc1d00000) failed: NV_ERR_OBJECT_NOT_FOUND (0x57)"));
}

TEST_F(GspTransportTest, AReplyToAnotherFunctionIsNotTakenAndTheWaitTimesOut) {
  // GSP-RM answers the alloc as if it were a control: that message goes to the event handler (it could be the late
  // reply of an RPC sent without waiting), and the alloc's reply never comes.
  respond_ = [this](const sim::GspCommand& command) {
    sim::GspCommand as_control = command;
    as_control.function = NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL;
    Reply(as_control, NV_OK, command.payload);
  };
  GspTransport transport(*queue_, kShortTimeout);
  absl::StatusOr<Handle> made = transport.Alloc(kClient, kDevice, kSubdevice, NV20_SUBDEVICE_0, {});
  EXPECT_EQ(made.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(made.status().message(),
              HasSubstr("NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC of object 0xcf000001 (class NV20_SUBDEVICE_0 (0x2080), "
                        "parent 0xcf000000, client 0xc1d00000): GSP-RM did not answer "
                        "NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC (0x67) within 20ms"));
  EXPECT_FALSE(NvStatusOf(made.status()).has_value());
  EXPECT_THAT(events_, ElementsAre(NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL));
}

TEST_F(GspTransportTest, NoReplyTimesOut) {
  GspTransport transport(*queue_, kShortTimeout);
  absl::Status status = transport.Free(kClient, kDevice, kVaSpace);
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(status.message(), HasSubstr("NV_VGPU_MSG_FUNCTION_FREE of object 0xcf000002 (parent 0xcf000000, client "
                                          "0xc1d00000): GSP-RM did not answer NV_VGPU_MSG_FUNCTION_FREE (0xa) within "
                                          "20ms"));
  EXPECT_EQ(commands_.size(), 1u);
}

// Malformed replies: each is a DataLoss error that says what is wrong, and nothing is copied back.
TEST_F(GspTransportTest, AReplyEchoingAnotherObjectIsMalformed) {
  respond_ = [this](const sim::GspCommand& command) {
    Reply(command, NV_OK, Bytes({kClient, kDevice, 0xcf000009, 0x2080, NV_OK, 4, 0, 0, 7}));
  };
  NV2080_ALLOC_PARAMETERS params{};
  GspTransport transport(*queue_);
  absl::StatusOr<Handle> made = transport.Alloc(kClient, kDevice, kSubdevice, NV20_SUBDEVICE_0,
                                                std::span(reinterpret_cast<uint8_t*>(&params), 4));
  EXPECT_EQ(made.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(made.status().message(),
              HasSubstr("NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC of object 0xcf000001 (class NV20_SUBDEVICE_0 (0x2080), "
                        "parent 0xcf000000, client 0xc1d00000): malformed reply from GSP-RM: hObject 0xcf000009, sent "
                        "0xcf000001"));
  EXPECT_EQ(params.subDeviceId, 0u);
}

TEST_F(GspTransportTest, AReplyEchoingAnotherClassClientOrCommandIsMalformed) {
  GspTransport transport(*queue_);
  respond_ = [this](const sim::GspCommand& command) {
    Reply(command, NV_OK, Bytes({kClient, kDevice, kSubdevice, 0x2081, NV_OK, 0, 0, 0}));
  };
  EXPECT_THAT(transport.Alloc(kClient, kDevice, kSubdevice, NV20_SUBDEVICE_0, {}).status().message(),
              HasSubstr("malformed reply from GSP-RM: hClass 0x2081, sent 0x2080"));
  respond_ = [this](const sim::GspCommand& command) {
    Reply(command, NV_OK, Bytes({0xc1d00001, kSubdevice, 0x2080014a, NV_OK, 0, 0}));
  };
  EXPECT_THAT(transport.Control(kClient, kSubdevice, 0x2080014a, {}).message(),
              HasSubstr("malformed reply from GSP-RM: hClient 0xc1d00001, sent 0xc1d00000"));
  respond_ = [this](const sim::GspCommand& command) {
    Reply(command, NV_OK, Bytes({kClient, kSubdevice, 0x2080014b, NV_OK, 0, 0}));
  };
  EXPECT_THAT(transport.Control(kClient, kSubdevice, 0x2080014a, {}).message(),
              HasSubstr("malformed reply from GSP-RM: cmd 0x2080014b, sent 0x2080014a"));
  respond_ = [this](const sim::GspCommand& command) { Reply(command, NV_OK, Bytes({kClient, 0, kDevice, NV_OK})); };
  EXPECT_THAT(transport.Free(kClient, kClient, kVaSpace).message(),
              HasSubstr("malformed reply from GSP-RM: hObjectOld 0xcf000000, sent 0xcf000002"));
}

TEST_F(GspTransportTest, AReplyWithAnotherParamsSizeIsMalformed) {
  respond_ = [this](const sim::GspCommand& command) {
    Reply(command, NV_OK, Bytes({kClient, kSubdevice, 0x2080014a, NV_OK, 264, 0}));
  };
  gsp::NV2080_CTRL_GPU_GET_GID_INFO_PARAMS params{};
  GspTransport transport(*queue_);
  absl::Status status =
      transport.Control(kClient, kSubdevice, 0x2080014a, std::span(reinterpret_cast<uint8_t*>(&params), 268));
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("malformed reply from GSP-RM: paramsSize 0x108, sent 0x10c"));
}

TEST_F(GspTransportTest, AShortReplyIsMalformed) {
  respond_ = [this](const sim::GspCommand& command) {
    Reply(command, NV_OK, Bytes({kClient, kDevice, kSubdevice, 0}));
  };
  GspTransport transport(*queue_);
  absl::StatusOr<Handle> made = transport.Alloc(kClient, kDevice, kSubdevice, NV20_SUBDEVICE_0, {});
  EXPECT_EQ(made.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(made.status().message(),
              HasSubstr("malformed reply from GSP-RM: 16 bytes, shorter than rpc_gsp_rm_alloc_v03_00 (32)"));
}

TEST_F(GspTransportTest, AReplyMissingParameterBytesIsMalformed) {
  // The header claims 48 parameter bytes; 20 follow it.
  respond_ = [this](const sim::GspCommand& command) {
    std::vector<uint8_t> reply = Bytes({kClient, kDevice, kVaSpace, 0x90f1, NV_OK, 48, 0, 0});
    Append(reply, std::vector<uint8_t>(20, 0xee));
    Reply(command, NV_OK, reply);
  };
  NV_VASPACE_ALLOCATION_PARAMETERS params{};
  GspTransport transport(*queue_);
  absl::StatusOr<Handle> made =
      transport.Alloc(kClient, kDevice, kVaSpace, FERMI_VASPACE_A, std::span(reinterpret_cast<uint8_t*>(&params), 48));
  EXPECT_THAT(made.status().message(), HasSubstr("malformed reply from GSP-RM: 20 parameter bytes, paramsSize 48"));
  EXPECT_EQ(params.vaSize, 0u);
}

TEST_F(GspTransportTest, AShortFailedReplyStillNamesItsRpcResult) {
  respond_ = [this](const sim::GspCommand& command) { Reply(command, NV_ERR_INVALID_OBJECT_HANDLE, {}); };
  GspTransport transport(*queue_);
  absl::Status status = transport.Control(kClient, 0xcf000077, 0x2080014a, {});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("on object 0xcf000077 (client 0xc1d00000) failed: "
                                          "NV_ERR_INVALID_OBJECT_HANDLE (0x33)"));
}

TEST_F(GspTransportTest, ObjectHandleZeroIsRefused) {
  GspTransport transport(*queue_);
  absl::StatusOr<Handle> made = transport.Alloc(kClient, kDevice, kNullObject, NV20_SUBDEVICE_0, {});
  EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(made.status().message(), HasSubstr("GSP-RM takes the handle its caller chooses"));
  EXPECT_TRUE(commands_.empty());
}

TEST_F(GspTransportTest, EventsDuringTheWaitGoToTheQueuesHandler) {
  respond_ = [this](const sim::GspCommand& command) {
    ASSERT_TRUE(gsp_.WriteEvent(NV_VGPU_MSG_EVENT_OS_ERROR_LOG, std::vector<uint8_t>(268)).ok());
    Reply(command, NV_OK, Bytes({kClient, 0, kVaSpace, NV_OK}));
  };
  GspTransport transport(*queue_);
  ASSERT_TRUE(transport.Free(kClient, kDevice, kVaSpace).ok());
  EXPECT_THAT(events_, ElementsAre(NV_VGPU_MSG_EVENT_OS_ERROR_LOG));
}

// 70000 parameter bytes: 24 + 70000 = 70024 bytes go out as 65456 + 4568 (a CONTINUATION_RECORD; nouveau's
// max_rpc_size), and the reply comes back the same way; the driver reassembles it to the request's length.
TEST_F(GspTransportTest, LargeParametersCrossInContinuationRecordsBothWays) {
  respond_ = [this](const sim::GspCommand& command) {
    std::vector<uint8_t> reply = command.payload;
    for (size_t i = 24; i < reply.size(); ++i) reply[i] = static_cast<uint8_t>(~reply[i]);
    Reply(command, NV_OK, reply);
  };
  std::vector<uint8_t> params(70000);
  for (size_t i = 0; i < params.size(); ++i) params[i] = static_cast<uint8_t>(i * 7);
  const std::vector<uint8_t> sent = params;
  GspTransport transport(*queue_);
  ASSERT_TRUE(transport.Control(kClient, kSubdevice, 0x20800000, params).ok());
  ASSERT_EQ(commands_.size(), 1u);
  EXPECT_EQ(commands_[0].records, 2u);
  EXPECT_EQ(std::vector<uint8_t>(commands_[0].payload.begin() + 24, commands_[0].payload.end()), sent);
  for (size_t i = 0; i < params.size(); i += 9999) ASSERT_EQ(params[i], static_cast<uint8_t>(~sent[i])) << i;
  EXPECT_EQ(params.back(), static_cast<uint8_t>(~sent.back()));
}

// The client over this transport: the root client, a device and a subdevice, freed in reverse when they go out of
// scope, the root last. GSP-RM's six replies, by hand: each request's structure and parameters back with status
// NV_OK (nothing for it to fill in here).
TEST_F(GspTransportTest, AClientsObjectsCrossTheQueues) {
  std::vector<uint8_t> root_reply = Bytes({kClient, kClient, kClient, 0, NV_OK, 108, 0, 0, kClient, 0xffffffff});
  Append(root_reply, std::vector<uint8_t>(100));  // processName
  std::vector<uint8_t> device_reply = Bytes({kClient, kClient, kDevice, 0x80, NV_OK, 56, 0, 0, 0, kClient});
  Append(device_reply, std::vector<uint8_t>(48));  // hTargetClient .. vaMode and the tail padding
  std::deque<std::vector<uint8_t>> replies = {
      root_reply,
      device_reply,
      Bytes({kClient, kDevice, kSubdevice, 0x2080, NV_OK, 4, 0, 0, 0}),
      Bytes({kClient, 0, kSubdevice, NV_OK}),
      Bytes({kClient, 0, kDevice, NV_OK}),
      Bytes({kClient, 0, kClient, NV_OK}),
  };
  respond_ = [&](const sim::GspCommand& command) {
    ASSERT_FALSE(replies.empty());
    Reply(command, NV_OK, replies.front());
    replies.pop_front();
  };
  GspTransport transport(*queue_);
  {
    absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(transport);
    ASSERT_TRUE(client.ok()) << client.status();
    absl::StatusOr<Object> device = (*client)->AllocDevice();
    ASSERT_TRUE(device.ok()) << device.status();
    absl::StatusOr<Object> subdevice = (*client)->AllocSubdevice(*device);
    ASSERT_TRUE(subdevice.ok()) << subdevice.status();
  }
  EXPECT_TRUE(replies.empty());
  ASSERT_EQ(commands_.size(), 6u);
  // Root: NV0000_ALLOC_PARAMETERS {hClient 0xc1d00000, processID ~0, processName ""}: 108 bytes.
  EXPECT_EQ(commands_[0].function, NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC);
  std::vector<uint32_t> root = Words(commands_[0].payload);
  ASSERT_EQ(root.size(), (32u + 108u) / 4);
  EXPECT_THAT(std::vector<uint32_t>(root.begin(), root.begin() + 10),
              ElementsAre(kClient, kClient, kClient, 0, 0, 108, 0, 0, kClient, 0xffffffff));
  // Device: NV0080_ALLOC_PARAMETERS {deviceId 0, hClientShare 0xc1d00000, ...}: 56 bytes.
  std::vector<uint32_t> device = Words(commands_[1].payload);
  EXPECT_THAT(device, ElementsAreArray({kClient, kClient, kDevice, 0x80u, 0u, 56u, 0u, 0u,  //
                                        0u,      kClient, 0u,      0u,    0u, 0u,  0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u}));
  EXPECT_THAT(Words(commands_[2].payload), ElementsAre(kClient, kDevice, kSubdevice, 0x2080, 0, 4, 0, 0, 0));
  EXPECT_EQ(commands_[3].function, NV_VGPU_MSG_FUNCTION_FREE);
  EXPECT_THAT(Words(commands_[3].payload), ElementsAre(kClient, 0, kSubdevice, 0));
  EXPECT_THAT(Words(commands_[4].payload), ElementsAre(kClient, 0, kDevice, 0));
  EXPECT_THAT(Words(commands_[5].payload), ElementsAre(kClient, 0, kClient, 0));
  EXPECT_TRUE(events_.empty());
  EXPECT_TRUE(gsp_.errors().empty());
}

}  // namespace
}  // namespace nv::rm
