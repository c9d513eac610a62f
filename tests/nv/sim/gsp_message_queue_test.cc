// The virtual GSP's end of the message queues (nv/sim/gsp_message_queue.h), against a shared region the test lays
// out by hand as nouveau's r535_gsp_shared_init does (0x81 pages at scattered bus addresses: the page table, the
// command queue at 0x1000 with elements from 0x2000, the status queue at 0x41000 with elements from 0x42000, 63
// elements each) and command elements whose bytes are worked out by hand. Where a case needs a well-formed long RPC,
// the driver (nv/gsp/message_queue.h) writes it.
#include "nv/sim/gsp_message_queue.h"

#include <cstring>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nv/gsp/message_queue.h"
#include "nv/regs/rpc_constants.h"
#include "nv/regs/status_constants.h"
#include "tests/nv/sim/host_device_memory.h"

namespace nv::sim {
namespace {

using ::testing::HasSubstr;
using namespace regs::rpc;  // NOLINT: the RPC numbers read as in the headers

constexpr uint64_t kCommandQueue = 0x1000;
constexpr uint64_t kCommandElements = 0x2000;
constexpr uint64_t kStatusQueue = 0x41000;
constexpr uint64_t kStatusElements = 0x42000;

// GSP_SET_SYSTEM_INFO (0x48) with parameters 01 02 .. 08, as 32-bit words; the checksum 0x4c545633 is worked out
// in tests/nv/gsp/message_queue_test.cc (CommandBytesMatchTheHandWorkedElement).
constexpr uint32_t kHandElement[] = {0,          0,          0,    0,    0, 0, 0, 0,  // authTagBuffer, aadBuffer
                                     0x4c545633, 0,          1,    0,     // checkSum, seqNum, elemCount, pad
                                     0x03000000, 0x43505256, 0x28, 0x48,  // version, signature, length, function
                                     0xffffffff, 0xffffffff, 0,    0,     // rpc_result(_private), sequence, spare
                                     0x04030201, 0x08070605};             // parameters
constexpr int kChecksumWord = 8, kSeqNumWord = 9, kElemCountWord = 10, kVersionWord = 12, kLengthWord = 14,
              kFunctionWord = 15;

class GspMessageQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    region_.MapInto(memory_);
    for (size_t i = 0; i < region_.bus.size(); ++i) std::memcpy(region_.bytes().data() + i * 8, &region_.bus[i], 8);
    // The driver's msgqTxHeader: version 0, size 0x40000, msgSize 0x1000, msgCount 63, writePtr 0, flags
    // MSGQ_FLAGS_SWAP_RX, rxHdrOff 32, entryOff 0x1000.
    const uint32_t header[] = {0, 0x40000, 0x1000, 63, 0, 1, 32, 0x1000};
    for (int i = 0; i < 8; ++i) region_.SetWord32(kCommandQueue + 4 * i, header[i]);
    arguments_.sharedMemPhysAddr = region_.bus[0];
    arguments_.pageTableEntryCount = 0x81;
    arguments_.cmdQueueOffset = 0x1000;
    arguments_.statQueueOffset = 0x41000;
  }

  void WriteElement(uint32_t element, std::span<const uint32_t> words) {
    for (size_t i = 0; i < words.size(); ++i) region_.SetWord32(kCommandElements + element * 0x1000 + 4 * i, words[i]);
  }
  void Publish(uint32_t write_ptr) { region_.SetWord32(kCommandQueue + 16, write_ptr); }

  void ExpectStoppedWith(absl::string_view message) {
    EXPECT_FALSE(gsp_.ReadCommand().has_value());
    ASSERT_EQ(gsp_.errors().size(), 1u);
    EXPECT_EQ(gsp_.errors()[0].code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(gsp_.errors()[0].message(), HasSubstr(message));
    EXPECT_TRUE(gsp_.stopped());
    EXPECT_FALSE(gsp_.ReadCommand().has_value());  // stays stopped, nothing new recorded
    EXPECT_EQ(gsp_.errors().size(), 1u);
  }

  testing::HostDeviceMemory memory_;
  testing::ScatteredRegion region_{0x81};
  gsp::MESSAGE_QUEUE_INIT_ARGUMENTS arguments_{};
  GspMessageQueue gsp_{memory_};
};

TEST_F(GspMessageQueueTest, StartCreatesTheStatusQueue) {
  region_.SetWord32(kStatusQueue + 32, 5);  // GSP-RM's read pointer of the command queue, zeroed by msgqRxLink
  ASSERT_TRUE(gsp_.Start(arguments_)) << gsp_.errors().front();
  const uint32_t expected[] = {0, 0x40000, 0x1000, 63, 0, 1, 32, 0x1000};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(region_.Word32(kStatusQueue + 4 * i), expected[i]) << "word " << i;
  EXPECT_EQ(region_.Word32(kStatusQueue + 32), 0u);
  EXPECT_FALSE(gsp_.ReadCommand().has_value());
  EXPECT_TRUE(gsp_.errors().empty());
}

TEST_F(GspMessageQueueTest, ReadsTheHandBuiltElement) {
  ASSERT_TRUE(gsp_.Start(arguments_));
  WriteElement(0, kHandElement);
  EXPECT_FALSE(gsp_.ReadCommand().has_value());  // not published yet
  Publish(1);
  std::optional<GspCommand> command = gsp_.ReadCommand();
  ASSERT_TRUE(command.has_value()) << gsp_.errors().front();
  EXPECT_EQ(command->function, NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO);
  EXPECT_EQ(command->payload, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(command->first_element, 0u);
  EXPECT_EQ(command->records, 1u);
  EXPECT_EQ(region_.Word32(kStatusQueue + 32), 1u);  // consumed
  EXPECT_EQ(gsp_.commands_read(), 1u);
}

// GSP_INIT_DONE (0x1001) with parameters 01 .. 08: as the hand-built command but function 0x1001 and rpc_result and
// rpc_result_private 0. High halves: 0x43505256 ^ 0x1001 ^ 0x08070605 = 0x4b574452; low halves: 0x1 ^ 0x03000000 ^
// 0x28 ^ 0x04030201 = 0x07030228; folded: 0x4c54467a.
TEST_F(GspMessageQueueTest, WritesTheHandWorkedEvent) {
  ASSERT_TRUE(gsp_.Start(arguments_));
  const std::vector<uint8_t> payload = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_TRUE(gsp_.WriteEvent(NV_VGPU_MSG_EVENT_GSP_INIT_DONE, payload).ok());
  const uint32_t expected[] = {0, 0,          0,          0,    0,      0, 0, 0, 0x4c54467a, 0,          1,
                               0, 0x03000000, 0x43505256, 0x28, 0x1001, 0, 0, 0, 0,          0x04030201, 0x08070605};
  for (size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(region_.Word32(kStatusElements + 4 * i), expected[i]) << "word " << i;
  }
  EXPECT_EQ(region_.Word32(kStatusQueue + 16), 1u);  // writePtr
}

TEST_F(GspMessageQueueTest, Checksum) {
  ASSERT_TRUE(gsp_.Start(arguments_));
  uint32_t element[std::size(kHandElement)];
  std::copy(std::begin(kHandElement), std::end(kHandElement), element);
  element[kChecksumWord] ^= 1;
  WriteElement(0, element);
  Publish(1);
  // 48 + 0x28 = 88 bytes checksummed; the stored checkSum is off by 1, so the fold is 1.
  ExpectStoppedWith(
      "command queue element 0 (shared-region offset 0x2000, command 0): checksum mismatch: the 64-bit "
      "XOR of its 88 bytes folds to 0x1, not 0 (checkSum 0x4c545632)");
  EXPECT_EQ(region_.Word32(kStatusQueue + 32), 0u);  // not consumed
}

TEST_F(GspMessageQueueTest, Sequence) {
  ASSERT_TRUE(gsp_.Start(arguments_));
  uint32_t element[std::size(kHandElement)];
  std::copy(std::begin(kHandElement), std::end(kHandElement), element);
  element[kSeqNumWord] = 1;
  element[kChecksumWord] ^= 1;  // seqNum is the high half of the checkSum's word: the fold stays 0
  WriteElement(0, element);
  Publish(1);
  ExpectStoppedWith("command queue element 0 (shared-region offset 0x2000, command 0): seqNum 1, expected 0");
}

TEST_F(GspMessageQueueTest, SequenceCountsMessages) {
  ASSERT_TRUE(gsp_.Start(arguments_));
  WriteElement(0, kHandElement);
  uint32_t second[std::size(kHandElement)];
  std::copy(std::begin(kHandElement), std::end(kHandElement), second);
  second[kSeqNumWord] = 1;
  second[kChecksumWord] ^= 1;
  WriteElement(1, second);
  WriteElement(2, second);  // a replay of message 1 where 2 belongs
  Publish(3);
  EXPECT_TRUE(gsp_.ReadCommand().has_value());
  EXPECT_TRUE(gsp_.ReadCommand().has_value());
  ExpectStoppedWith("command queue element 2 (shared-region offset 0x4000, command 2): seqNum 1, expected 2");
}

TEST_F(GspMessageQueueTest, ElemCountBeyondTheLargestMessage) {
  ASSERT_TRUE(gsp_.Start(arguments_));
  uint32_t element[std::size(kHandElement)];
  std::copy(std::begin(kHandElement), std::end(kHandElement), element);
  element[kElemCountWord] = 17;
  WriteElement(0, element);
  Publish(1);
  ExpectStoppedWith("command queue element 0 (shared-region offset 0x2000, command 0): elemCount 17 is not 1..16");
}

TEST_F(GspMessageQueueTest, ElemCountBeyondWhatWasPublished) {
  ASSERT_TRUE(gsp_.Start(arguments_));
  uint32_t element[std::size(kHandElement)];
  std::copy(std::begin(kHandElement), std::end(kHandElement), element);
  element[kElemCountWord] = 3;
  WriteElement(0, element);
  Publish(2);
  ExpectStoppedWith("elemCount 3 but the driver published only 2 elements (writePtr 2)");
}

TEST_F(GspMessageQueueTest, LengthShorterThanTheRpcHeader) {
  ASSERT_TRUE(gsp_.Start(arguments_));
  uint32_t element[std::size(kHandElement)];
  std::copy(std::begin(kHandElement), std::end(kHandElement), element);
  element[kLengthWord] = 16;
  WriteElement(0, element);
  Publish(1);
  ExpectStoppedWith("rpc length 16 does not fit its 1 element(s) (at least 32, at most 4048)");
}

TEST_F(GspMessageQueueTest, HeaderVersion) {
  ASSERT_TRUE(gsp_.Start(arguments_));
  uint32_t element[std::size(kHandElement)];
  std::copy(std::begin(kHandElement), std::end(kHandElement), element);
  element[kVersionWord] = 0x02000000;
  element[kChecksumWord] ^= 0x03000000 ^ 0x02000000;
  WriteElement(0, element);
  Publish(1);
  ExpectStoppedWith("header_version 0x2000000, expected 0x3000000");
}

TEST_F(GspMessageQueueTest, Signature) {
  ASSERT_TRUE(gsp_.Start(arguments_));
  uint32_t element[std::size(kHandElement)];
  std::copy(std::begin(kHandElement), std::end(kHandElement), element);
  element[kVersionWord + 1] = 0x56525043;  // 'CPRV' byte-swapped
  element[kChecksumWord] ^= 0x43505256 ^ 0x56525043;
  WriteElement(0, element);
  Publish(1);
  ExpectStoppedWith("signature 0x56525043, expected NV_VGPU_MSG_SIGNATURE_VALID 0x43505256");
}

TEST_F(GspMessageQueueTest, AContinuationRecordWithNoRpc) {
  ASSERT_TRUE(gsp_.Start(arguments_));
  uint32_t element[std::size(kHandElement)];
  std::copy(std::begin(kHandElement), std::end(kHandElement), element);
  element[kFunctionWord] = NV_VGPU_MSG_FUNCTION_CONTINUATION_RECORD;  // 0x47: 0x48 ^ 0x47 = 0xf in the high half
  element[kChecksumWord] ^= 0xf;
  WriteElement(0, element);
  Publish(1);
  ExpectStoppedWith("command queue element 0: a continuation record (command 0) with no RPC to continue");
}

TEST_F(GspMessageQueueTest, WritePointerBeyondTheQueue) {
  ASSERT_TRUE(gsp_.Start(arguments_));
  Publish(63);
  ExpectStoppedWith("the driver's writePtr 63 (shared-region offset 0x1010) is not below msgCount 63");
}

TEST_F(GspMessageQueueTest, APageTableEntryOutsideMappedMemory) {
  const uint64_t unmapped = 0x1234000;
  std::memcpy(region_.bytes().data() + 5 * 8, &unmapped, 8);
  EXPECT_FALSE(gsp_.Start(arguments_));
  ASSERT_EQ(gsp_.errors().size(), 1u);
  EXPECT_THAT(gsp_.errors()[0].message(),
              HasSubstr("page-table entry 5 (shared-region offset 0x28) is 0x1234000, which reaches no mapped memory"));
  EXPECT_FALSE(gsp_.started());
  EXPECT_EQ(gsp_.WriteEvent(NV_VGPU_MSG_EVENT_GSP_INIT_DONE, {}).code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(GspMessageQueueTest, AMisalignedPageTableEntry) {
  const uint64_t misaligned = region_.bus[9] + 8;
  std::memcpy(region_.bytes().data() + 9 * 8, &misaligned, 8);
  EXPECT_FALSE(gsp_.Start(arguments_));
  EXPECT_THAT(gsp_.errors()[0].message(), HasSubstr("page-table entry 9 (shared-region offset 0x48) is"));
  EXPECT_THAT(gsp_.errors()[0].message(), HasSubstr("not 4 KiB aligned"));
}

TEST_F(GspMessageQueueTest, ThePageTableMustMapItselfFirst) {
  arguments_.sharedMemPhysAddr = region_.bus[1];
  EXPECT_FALSE(gsp_.Start(arguments_));
  // Entry 0 is then read from page 1, the command queue's header: version 0, size 0x40000 make 0x4000000000000.
  EXPECT_THAT(gsp_.errors()[0].message(), HasSubstr("page-table entry 0 is 0x4000000000000, not sharedMemPhysAddr"));
}

TEST_F(GspMessageQueueTest, AQueuePageUnmappedLater) {
  ASSERT_TRUE(gsp_.Start(arguments_));
  memory_.UnmapPage(region_.bus[2]);  // the command queue's element 0 (shared-region page 2)
  Publish(1);
  ExpectStoppedWith("DMA from bus address");
  EXPECT_THAT(gsp_.errors()[0].message(), HasSubstr("(shared-region offset 0x2000, page-table entry 2) reaches no "
                                                    "mapped memory"));
}

TEST_F(GspMessageQueueTest, BadInitArguments) {
  arguments_.statQueueOffset = 0x81000;  // the region's end
  EXPECT_FALSE(gsp_.Start(arguments_));
  EXPECT_THAT(gsp_.errors()[0].message(),
              HasSubstr("cmdQueueOffset 0x1000 / statQueueOffset 0x81000: the queues must be page-aligned"));
  GspMessageQueue empty(memory_);
  arguments_.pageTableEntryCount = 0;
  EXPECT_FALSE(empty.Start(arguments_));
  EXPECT_THAT(empty.errors()[0].message(), HasSubstr("pageTableEntryCount 0"));
}

TEST_F(GspMessageQueueTest, BadCommandQueueHeaders) {
  struct Case {
    uint32_t word;
    uint32_t value;
    const char* message;
  } cases[] = {
      {1, 0x3f000, "size is not statQueueOffset - cmdQueueOffset (0x40000)"},
      {2, 0x800, "msgSize is not GSP_MSG_QUEUE_ELEMENT_SIZE_MIN"},
      {3, 62, "msgCount does not match size and entryOff"},
      {5, 0, "MSGQ_FLAGS_SWAP_RX is clear"},
      {6, 16, "rxHdrOff overlaps the msgqTxHeader"},
      {7, 0x800, "entryOff is not element-aligned"},
  };
  for (const Case& c : cases) {
    SetUp();
    const uint32_t saved = region_.Word32(kCommandQueue + 4 * c.word);
    region_.SetWord32(kCommandQueue + 4 * c.word, c.value);
    GspMessageQueue gsp(memory_);
    EXPECT_FALSE(gsp.Start(arguments_)) << c.message;
    ASSERT_FALSE(gsp.errors().empty());
    EXPECT_THAT(gsp.errors()[0].message(), HasSubstr("command queue header (shared-region offset 0x1000)"));
    EXPECT_THAT(gsp.errors()[0].message(), HasSubstr(c.message));
    region_.SetWord32(kCommandQueue + 4 * c.word, saved);
  }
}

TEST_F(GspMessageQueueTest, AFullStatusQueueRefusesMore) {
  ASSERT_TRUE(gsp_.Start(arguments_));
  for (int i = 0; i < 62; ++i) ASSERT_TRUE(gsp_.WriteEvent(NV_VGPU_MSG_EVENT_GSP_INIT_DONE, {}).ok()) << i;
  absl::Status full = gsp_.WriteEvent(NV_VGPU_MSG_EVENT_GSP_INIT_DONE, {});
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(full.message(), HasSubstr("status queue full for NV_VGPU_MSG_EVENT_GSP_INIT_DONE (0x1001) (1 elements "
                                        "needed, 0 free; driver readPtr 0, writePtr 62)"));
  EXPECT_TRUE(gsp_.errors().empty());  // the driver being slow is no mistake
}

// Continuations: the driver writes the records; the model's sizer says how long the RPC is.
class ContinuationTest : public GspMessageQueueTest {
 protected:
  void SetUp() override {
    GspMessageQueueTest::SetUp();
    auto driver = gsp::MessageQueue::Create(region_.bytes(), region_.bus, [] {});
    ASSERT_TRUE(driver.ok()) << driver.status();
    driver_ = std::move(*driver);
    ASSERT_TRUE(gsp_.Start(driver_->init_arguments()));
  }
  // GSP_RM_CONTROL declares `declared` parameter bytes whatever its record says.
  GspMessageQueue::RpcSizer Declares(uint64_t declared) {
    return [declared](uint32_t function, std::span<const uint8_t> first) {
      return function == NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL ? declared : first.size();
    };
  }
  std::unique_ptr<gsp::MessageQueue> driver_;
};

TEST_F(ContinuationTest, AnRpcCutShortByAnother) {
  GspMessageQueue gsp(memory_, Declares(gsp::kMaxRecordPayload + 10));
  ASSERT_TRUE(gsp.Start(driver_->init_arguments()));
  std::vector<uint8_t> payload(gsp::kMaxRecordPayload);
  ASSERT_TRUE(driver_->SendRpc(NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL, payload, absl::Seconds(1)).ok());
  EXPECT_FALSE(gsp.ReadCommand().has_value());  // waiting for the rest
  EXPECT_TRUE(gsp.errors().empty());
  ASSERT_TRUE(driver_->SendRpc(NV_VGPU_MSG_FUNCTION_FREE, std::vector<uint8_t>(16), absl::Seconds(1)).ok());
  EXPECT_FALSE(gsp.ReadCommand().has_value());
  ASSERT_EQ(gsp.errors().size(), 1u);
  EXPECT_THAT(gsp.errors()[0].message(),
              HasSubstr("command queue element 16: NV_VGPU_MSG_FUNCTION_FREE (0xa) while "
                        "NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL (0x4c) (element 0) had 65456 of its 65466 parameter "
                        "bytes; expected a continuation record"));
}

TEST_F(ContinuationTest, AContinuationThatOverruns) {
  GspMessageQueue gsp(memory_, Declares(gsp::kMaxRecordPayload + 10));
  ASSERT_TRUE(gsp.Start(driver_->init_arguments()));
  ASSERT_TRUE(driver_
                  ->SendRpc(NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL, std::vector<uint8_t>(gsp::kMaxRecordPayload + 20),
                            absl::Seconds(1))
                  .ok());
  EXPECT_FALSE(gsp.ReadCommand().has_value());
  ASSERT_EQ(gsp.errors().size(), 1u);
  EXPECT_THAT(gsp.errors()[0].message(),
              HasSubstr("command queue element 16: a 20-byte continuation record overruns "
                        "NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL (0x4c)'s 65466 parameter bytes (65456 so far)"));
}

TEST_F(ContinuationTest, ADeclaredSizeInAShortRecord) {
  GspMessageQueue gsp(memory_, Declares(100000));
  ASSERT_TRUE(gsp.Start(driver_->init_arguments()));
  ASSERT_TRUE(driver_->SendRpc(NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL, std::vector<uint8_t>(5000), absl::Seconds(1)).ok());
  EXPECT_FALSE(gsp.ReadCommand().has_value());
  ASSERT_EQ(gsp.errors().size(), 1u);
  EXPECT_THAT(gsp.errors()[0].message(),
              HasSubstr("command queue element 0: NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL (0x4c) declares 100000 "
                        "parameter bytes but its record carries 5000 and is not full"));
}

TEST(DefaultRpcSizeTest, TheSizesTheRpcsDeclare) {
  // rpc_gsp_rm_control_v03_00: paramsSize at byte 16, 24 bytes before the parameters.
  std::vector<uint8_t> control(24);
  const uint32_t params = 70000;
  std::memcpy(control.data() + 16, &params, 4);
  EXPECT_EQ(GspMessageQueue::DefaultRpcSize(NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL, control), 70024u);
  // rpc_gsp_rm_alloc_v03_00: paramsSize at byte 20, 32 bytes before the parameters.
  std::vector<uint8_t> alloc(32);
  std::memcpy(alloc.data() + 20, &params, 4);
  EXPECT_EQ(GspMessageQueue::DefaultRpcSize(NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC, alloc), 70032u);
  // PACKED_REGISTRY_TABLE: size at byte 0, the whole table.
  std::vector<uint8_t> registry(8);
  std::memcpy(registry.data(), &params, 4);
  EXPECT_EQ(GspMessageQueue::DefaultRpcSize(NV_VGPU_MSG_FUNCTION_SET_REGISTRY, registry), 70000u);
  // Too short to hold its structure, or any other RPC: the record is all.
  EXPECT_EQ(GspMessageQueue::DefaultRpcSize(NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL, std::span(control).first(20)), 20u);
  EXPECT_EQ(GspMessageQueue::DefaultRpcSize(NV_VGPU_MSG_FUNCTION_FREE, control), 24u);
}

}  // namespace
}  // namespace nv::sim
