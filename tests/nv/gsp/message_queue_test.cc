// The driver's end of GSP-RM's message queues (nv/gsp/message_queue.h): the shared region as nouveau lays it out,
// the bytes of a command worked out by hand, round trips with the virtual GSP (nv/sim/gsp_message_queue.h) over
// host memory at scattered bus addresses, wrap-around, continuation records both ways, events interleaved with a
// reply, and what a corrupt status queue turns into.
//
// The default layout, by hand from nouveau's r535_gsp_shared_init: 0x40000-byte queues are 0x40 pages each, 0x80
// together; their 0x80 8-byte page-table entries take 0x400 bytes, one page, so 0x81 entries; the page table is one
// page (0x1000), the command queue at 0x1000 (elements from 0x2000), the status queue at 0x41000 (elements from
// 0x42000), 0x81000 bytes in all. Each queue has (0x40000 - 0x1000) / 0x1000 = 63 elements.
#include "nv/gsp/message_queue.h"

#include <atomic>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nv/regs/rpc_constants.h"
#include "nv/regs/status_constants.h"
#include "nv/sim/gsp_message_queue.h"
#include "tests/nv/sim/host_device_memory.h"

namespace nv::gsp {
namespace {

using ::testing::HasSubstr;
using namespace regs::rpc;  // NOLINT: the RPC numbers read as in the headers

constexpr uint64_t kCommandQueue = 0x1000;
constexpr uint64_t kCommandElements = 0x2000;
constexpr uint64_t kStatusQueue = 0x41000;
constexpr uint64_t kStatusElements = 0x42000;
constexpr absl::Duration kTimeout = absl::Seconds(5);

std::vector<uint8_t> Pattern(size_t size, uint32_t seed) {
  std::vector<uint8_t> bytes(size);
  uint32_t x = seed * 2654435761u + 1;
  for (uint8_t& b : bytes) {
    x = x * 1103515245u + 12345u;
    b = static_cast<uint8_t>(x >> 16);
  }
  return bytes;
}

class MessageQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    region_.MapInto(memory_);
    auto queue = MessageQueue::Create(region_.bytes(), region_.bus, [this] {
      ++doorbells_;
      if (on_doorbell_) on_doorbell_();
    });
    ASSERT_TRUE(queue.ok()) << queue.status();
    queue_ = std::move(*queue);
  }

  void StartGsp() { ASSERT_TRUE(gsp_.Start(queue_->init_arguments())) << gsp_.errors().front(); }

  // The virtual GSP answers every command as it arrives: the reply carries the command's parameters reversed.
  void EchoReversed() {
    on_doorbell_ = [this] {
      while (std::optional<sim::GspCommand> command = gsp_.ReadCommand()) {
        commands_.push_back(*command);
        std::vector<uint8_t> reply(command->payload.rbegin(), command->payload.rend());
        ASSERT_TRUE(gsp_.WriteReply(*command, regs::status::NV_OK, reply).ok());
      }
    };
  }

  sim::testing::HostDeviceMemory memory_;
  sim::testing::ScatteredRegion region_{0x81};
  sim::GspMessageQueue gsp_{memory_};
  std::unique_ptr<MessageQueue> queue_;
  int doorbells_ = 0;
  std::function<void()> on_doorbell_;
  std::vector<sim::GspCommand> commands_;
};

TEST(DoorbellTest, IsTheGspQueueHeadRegister) {
  // nouveau writes 0 to the GSP falcon's 0xc00; the falcon is at BAR0 0x110000 (NV_PGSP): 0x110c00.
  EXPECT_EQ(kDoorbellRegister, 0x110c00u);
  EXPECT_EQ(kDoorbellValue, 0u);
}

TEST(LayoutSharedRegionTest, NouveausDefault) {
  absl::StatusOr<SharedRegionLayout> layout = LayoutSharedRegion();
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->queue_size, 0x40000u);
  EXPECT_EQ(layout->page_table_entries, 0x81u);
  EXPECT_EQ(layout->command_queue_offset, 0x1000u);
  EXPECT_EQ(layout->status_queue_offset, 0x41000u);
  EXPECT_EQ(layout->size, 0x81000u);
}

TEST(LayoutSharedRegionTest, LargeQueuesNeedMoreTablePages) {
  // 6 * 256 KiB (RM's pre-silicon command queue) for each: 0x300 pages, 0x1800 bytes of entries = 2 pages.
  absl::StatusOr<SharedRegionLayout> layout = LayoutSharedRegion(0x180000);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->page_table_entries, 0x302u);
  EXPECT_EQ(layout->command_queue_offset, 0x2000u);
  EXPECT_EQ(layout->status_queue_offset, 0x182000u);
}

TEST(LayoutSharedRegionTest, RejectsSizesThatCannotHoldTheLargestMessage) {
  // A header page and 17 elements (the largest message, 16, and the one msgq keeps free): 0x12000.
  EXPECT_TRUE(LayoutSharedRegion(0x12000).ok());
  absl::StatusOr<SharedRegionLayout> small = LayoutSharedRegion(0x11000);
  EXPECT_EQ(small.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(small.status().message(), HasSubstr("at least 0x12000"));
  absl::StatusOr<SharedRegionLayout> odd = LayoutSharedRegion(0x40800);
  EXPECT_THAT(odd.status().message(), HasSubstr("multiple of 0x1000"));
}

TEST_F(MessageQueueTest, CreateWritesThePageTableAndTheCommandQueueHeader) {
  for (uint32_t i = 0; i < 0x81; ++i) {
    uint64_t pte;
    std::memcpy(&pte, region_.bytes().data() + i * 8, 8);
    EXPECT_EQ(pte, region_.bus[i]) << "entry " << i;
  }
  // msgqTxHeader: version 0, size 0x40000, msgSize 0x1000, msgCount 63, writePtr 0, flags MSGQ_FLAGS_SWAP_RX (1),
  // rxHdrOff 32, entryOff 0x1000 (r535_gsp_shared_init's values).
  const uint32_t expected[] = {0, 0x40000, 0x1000, 63, 0, 1, 32, 0x1000};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(region_.Word32(kCommandQueue + 4 * i), expected[i]) << "word " << i;
  const MESSAGE_QUEUE_INIT_ARGUMENTS& args = queue_->init_arguments();
  EXPECT_EQ(args.sharedMemPhysAddr, region_.bus[0]);
  EXPECT_EQ(args.pageTableEntryCount, 0x81u);
  EXPECT_EQ(args.cmdQueueOffset, 0x1000u);
  EXPECT_EQ(args.statQueueOffset, 0x41000u);
  EXPECT_EQ(args.locklessCmdQueueOffset, 0u);
}

TEST_F(MessageQueueTest, CreateRejectsMisfits) {
  std::vector<uint64_t> words(0x81000 / 8);
  std::span<uint8_t> bytes(reinterpret_cast<uint8_t*>(words.data()), 0x81000);
  std::vector<uint64_t> bus = region_.bus;
  auto doorbell = [] {};
  EXPECT_THAT(MessageQueue::Create(bytes.first(0x80000), bus, doorbell).status().message(),
              HasSubstr("0x80000 bytes of shared memory given, the layout for 0x40000-byte queues takes 0x81000"));
  EXPECT_THAT(MessageQueue::Create(bytes, std::span(bus).first(0x80), doorbell).status().message(),
              HasSubstr("128 page addresses given, the region has 129 pages"));
  bus[7] += 0x10;
  EXPECT_THAT(MessageQueue::Create(bytes, bus, doorbell).status().message(), HasSubstr("page 7's bus address"));
}

// A command's bytes, worked out by hand: GSP_SET_SYSTEM_INFO (0x48) with the 8 parameter bytes 01 02 .. 08.
// The element as 64-bit little-endian words: 0-3 auth tag and AAD (0); 4 checkSum | seqNum 0 << 32; 5 elemCount 1;
// 6 header_version 0x03000000 | signature 0x43505256 ('CPRV') << 32; 7 length 0x28 (32 + 8) | function 0x48 << 32;
// 8 rpc_result and rpc_result_private 0xffffffff (RPC_PENDING); 9 sequence 0, spare 0; 10 the parameters
// 0x0807060504030201. XOR of the high halves: 0x43505256 ^ 0x48 ^ 0xffffffff ^ 0x08070605 = 0xb4a8abe4; of the low
// halves (checkSum 0): 0x1 ^ 0x03000000 ^ 0x28 ^ 0xffffffff ^ 0x04030201 = 0xf8fcfdd7; folded: 0x4c545633.
TEST_F(MessageQueueTest, CommandBytesMatchTheHandWorkedElement) {
  const std::vector<uint8_t> payload = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_TRUE(queue_->SendRpc(NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO, payload, kTimeout).ok());
  const uint32_t expected[] = {0,          0,          0,    0,    0, 0, 0, 0,  // authTagBuffer, aadBuffer
                               0x4c545633, 0,          1,    0,                 // checkSum, seqNum, elemCount, pad
                               0x03000000, 0x43505256, 0x28, 0x48,  // header_version, signature, length, function
                               0xffffffff, 0xffffffff, 0,    0,     // rpc_result(_private), sequence, spare
                               0x04030201, 0x08070605};             // parameters
  for (size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(region_.Word32(kCommandElements + 4 * i), expected[i]) << "word " << i;
  }
  for (uint64_t offset = 88; offset < 0x1000; offset += 4) {
    ASSERT_EQ(region_.Word32(kCommandElements + offset), 0u) << "offset " << offset;
  }
  EXPECT_EQ(region_.Word32(kCommandQueue + 16), 1u);  // writePtr published
  EXPECT_EQ(doorbells_, 1);
}

TEST_F(MessageQueueTest, RoundTripWithTheVirtualGsp) {
  StartGsp();
  EchoReversed();
  const std::vector<uint8_t> payload = Pattern(1000, 1);
  ASSERT_TRUE(queue_->SendRpc(NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO, payload, kTimeout).ok());
  absl::StatusOr<GspMessage> reply = queue_->WaitFor(NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO, kTimeout);
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_EQ(commands_.size(), 1u);
  EXPECT_EQ(commands_[0].payload, payload);
  EXPECT_EQ(reply->payload, std::vector<uint8_t>(payload.rbegin(), payload.rend()));
  EXPECT_EQ(reply->rpc_result, regs::status::NV_OK);
  EXPECT_EQ(reply->element_index, 0u);
  EXPECT_EQ(queue_->sent_messages(), 1u);
  EXPECT_EQ(queue_->received_messages(), 1u);
  // Both read pointers moved one element: the GSP's (status page + 32), the driver's (command page + 32).
  EXPECT_EQ(region_.Word32(kStatusQueue + 32), 1u);
  EXPECT_EQ(region_.Word32(kCommandQueue + 32), 1u);
  EXPECT_TRUE(gsp_.errors().empty());
}

TEST_F(MessageQueueTest, MessagesWrapAroundBothQueues) {
  StartGsp();
  EchoReversed();
  // (ALLOC_MEMORY: an RPC whose size its first record gives, so the random parameters are taken as they are.)
  // 6000 parameter bytes: 48 + 32 + 6000 = 6080 bytes, 2 elements. 31 of them take elements 0..61; the 32nd
  // starts at 62 and continues at 0 (14000 bytes: 14080, 4 elements: 62, 0, 1, 2). The status queue wraps the same.
  for (uint32_t i = 0; i < 31; ++i) {
    const std::vector<uint8_t> payload = Pattern(6000, i);
    ASSERT_TRUE(queue_->SendRpc(NV_VGPU_MSG_FUNCTION_ALLOC_MEMORY, payload, kTimeout).ok());
    absl::StatusOr<GspMessage> reply = queue_->WaitFor(NV_VGPU_MSG_FUNCTION_ALLOC_MEMORY, kTimeout);
    ASSERT_TRUE(reply.ok()) << reply.status();
    ASSERT_EQ(reply->payload, std::vector<uint8_t>(payload.rbegin(), payload.rend())) << i;
  }
  EXPECT_EQ(region_.Word32(kCommandQueue + 16), 62u);
  const std::vector<uint8_t> wrapping = Pattern(14000, 99);
  ASSERT_TRUE(queue_->SendRpc(NV_VGPU_MSG_FUNCTION_ALLOC_MEMORY, wrapping, kTimeout).ok());
  absl::StatusOr<GspMessage> reply = queue_->WaitFor(NV_VGPU_MSG_FUNCTION_ALLOC_MEMORY, kTimeout);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(commands_.back().first_element, 62u);
  EXPECT_EQ(commands_.back().payload, wrapping);
  EXPECT_EQ(reply->element_index, 62u);
  EXPECT_EQ(reply->payload, std::vector<uint8_t>(wrapping.rbegin(), wrapping.rend()));
  EXPECT_EQ(region_.Word32(kCommandQueue + 16), 3u);  // (62 + 4) % 63
  EXPECT_EQ(region_.Word32(kStatusQueue + 16), 3u);
  // The wrapped message's parameters continue at element 0: parameter byte 4096 - 80 = 4016 starts element 0.
  EXPECT_EQ(region_.bytes()[kCommandElements], wrapping[4016]);
}

TEST_F(MessageQueueTest, LargeRpcGoesOutInContinuationRecordsAndComesBackWhole) {
  StartGsp();
  EchoReversed();
  // GSP_RM_CONTROL's parameters: rpc_gsp_rm_control_v03_00 (24 bytes) and paramsSize bytes; 150000 in all go out
  // as 65456 + 65456 + 19088 (nouveau's max_rpc_size = 16 * 4096 - 48 - 32 = 65456).
  std::vector<uint8_t> payload = Pattern(150000, 7);
  rpc_gsp_rm_control_v03_00 control{};
  control.paramsSize = 150000 - sizeof(control);
  std::memcpy(payload.data(), &control, sizeof(control));
  ASSERT_TRUE(queue_->SendRpc(NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL, payload, kTimeout).ok());
  EXPECT_EQ(doorbells_, 3);
  ASSERT_EQ(commands_.size(), 1u);
  EXPECT_EQ(commands_[0].records, 3u);
  EXPECT_EQ(commands_[0].payload, payload);
  // The reply comes back the same way (3 records); the driver appends them to the 150000 bytes it expects.
  absl::StatusOr<GspMessage> reply = queue_->WaitFor(NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL, kTimeout, 150000);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->payload, std::vector<uint8_t>(payload.rbegin(), payload.rend()));
  EXPECT_EQ(queue_->received_messages(), 3u);
  EXPECT_TRUE(gsp_.errors().empty());
}

TEST_F(MessageQueueTest, EventsThatArriveFirstGoToTheHandler) {
  StartGsp();
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> events;
  queue_->set_event_handler([&](const GspMessage& m) { events.emplace_back(m.function, m.payload); });
  on_doorbell_ = [this] {
    std::optional<sim::GspCommand> command = gsp_.ReadCommand();
    ASSERT_TRUE(command.has_value());
    ASSERT_TRUE(gsp_.WriteEvent(NV_VGPU_MSG_EVENT_GSP_RUN_CPU_SEQUENCER, Pattern(40, 1)).ok());
    ASSERT_TRUE(gsp_.WriteEvent(NV_VGPU_MSG_EVENT_OS_ERROR_LOG, Pattern(268, 2)).ok());
    ASSERT_TRUE(gsp_.WriteReply(*command, regs::status::NV_OK, Pattern(16, 3)).ok());
    ASSERT_TRUE(gsp_.WriteEvent(NV_VGPU_MSG_EVENT_MMU_FAULT_QUEUED, Pattern(8, 4)).ok());
  };
  ASSERT_TRUE(queue_->SendRpc(NV_VGPU_MSG_FUNCTION_FREE, Pattern(16, 0), kTimeout).ok());
  absl::StatusOr<GspMessage> reply = queue_->WaitFor(NV_VGPU_MSG_FUNCTION_FREE, kTimeout);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->payload, Pattern(16, 3));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].first, NV_VGPU_MSG_EVENT_GSP_RUN_CPU_SEQUENCER);
  EXPECT_EQ(events[0].second, Pattern(40, 1));
  EXPECT_EQ(events[1].first, NV_VGPU_MSG_EVENT_OS_ERROR_LOG);
  EXPECT_EQ(events[1].second, Pattern(268, 2));
  // The event after the reply stays queued until the next poll.
  absl::StatusOr<std::optional<GspMessage>> later = queue_->Poll();
  ASSERT_TRUE(later.ok() && later->has_value());
  EXPECT_EQ((*later)->function, NV_VGPU_MSG_EVENT_MMU_FAULT_QUEUED);
}

TEST_F(MessageQueueTest, AFailedRpcNamesItsStatus) {
  StartGsp();
  on_doorbell_ = [this] {
    std::optional<sim::GspCommand> command = gsp_.ReadCommand();
    ASSERT_TRUE(command.has_value());
    ASSERT_TRUE(gsp_.WriteReply(*command, regs::status::NV_ERR_INVALID_ARGUMENT, {}).ok());
  };
  // rpc_gsp_rm_alloc_v03_00 with paramsSize 0: 32 bytes.
  ASSERT_TRUE(queue_->SendRpc(NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC, std::vector<uint8_t>(32), kTimeout).ok());
  absl::StatusOr<GspMessage> reply = queue_->WaitFor(NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC, kTimeout);
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      reply.status().message(),
      HasSubstr("GSP-RM failed NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC (0x67): rpc_result 0x1f NV_ERR_INVALID_ARGUMENT"));
}

TEST_F(MessageQueueTest, WaitForReplyReturnsAFailedReplyWhole) {
  // The RM client reads the NV_STATUS from a failed GSP_RM_ALLOC's parameters (RM's rpcRmApiAlloc_GSP), so the reply
  // comes back with its rpc_result instead of as an error.
  StartGsp();
  on_doorbell_ = [this] {
    std::optional<sim::GspCommand> command = gsp_.ReadCommand();
    ASSERT_TRUE(command.has_value());
    ASSERT_TRUE(gsp_.WriteReply(*command, regs::status::NV_ERR_INVALID_ARGUMENT, Pattern(32, 9)).ok());
  };
  ASSERT_TRUE(queue_->SendRpc(NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC, std::vector<uint8_t>(32), kTimeout).ok());
  absl::StatusOr<GspMessage> reply = queue_->WaitForReply(NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC, kTimeout);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->rpc_result, regs::status::NV_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(reply->payload, Pattern(32, 9));
}

TEST_F(MessageQueueTest, AFullCommandQueueTimesOut) {
  // Nobody consumes: 62 one-element RPCs fill the 63 elements (one stays free), the 63rd waits out its bound.
  for (int i = 0; i < 62; ++i) ASSERT_TRUE(queue_->SendRpc(NV_VGPU_MSG_FUNCTION_NOP, {}, kTimeout).ok()) << i;
  absl::Status full = queue_->SendRpc(NV_VGPU_MSG_FUNCTION_NOP, {}, absl::Milliseconds(5));
  EXPECT_EQ(full.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(full.message(),
              HasSubstr("GSP command queue full: NV_VGPU_MSG_FUNCTION_NOP (0) needs 1 elements, 0 free"));
}

TEST_F(MessageQueueTest, NoReplyTimesOut) {
  StartGsp();
  absl::StatusOr<GspMessage> reply = queue_->WaitFor(NV_VGPU_MSG_FUNCTION_FREE, absl::Milliseconds(5));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(reply.status().message(), HasSubstr("GSP-RM did not answer NV_VGPU_MSG_FUNCTION_FREE (0xa) within 5ms"));
}

TEST_F(MessageQueueTest, NothingArrivesBeforeGspRmCreatesTheStatusQueue) {
  absl::StatusOr<std::optional<GspMessage>> none = queue_->Poll();
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
}

TEST_F(MessageQueueTest, AMalformedStatusQueueHeaderIsAnError) {
  StartGsp();
  region_.SetWord32(kStatusQueue + 12, 62);  // msgCount: (0x40000 - 0x1000) / 0x1000 is 63
  absl::StatusOr<std::optional<GspMessage>> bad = queue_->Poll();
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(bad.status().message(), HasSubstr("GSP status queue header (shared-region offset 0x41000): msgCount "
                                                "does not match size and entryOff"));
}

// Corruptions of the status queue: the virtual GSP writes an event, the test changes its bytes.
class CorruptStatusTest : public MessageQueueTest {
 protected:
  void SetUp() override {
    MessageQueueTest::SetUp();
    StartGsp();
    ASSERT_TRUE(gsp_.WriteEvent(NV_VGPU_MSG_EVENT_GSP_INIT_DONE, Pattern(64, 5)).ok());
  }
  void ExpectError(absl::string_view message) {
    for (int attempt = 0; attempt < 2; ++attempt) {  // not consumed: the same error again
      absl::StatusOr<std::optional<GspMessage>> bad = queue_->Poll();
      EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
      EXPECT_THAT(bad.status().message(), HasSubstr(message));
    }
    EXPECT_EQ(region_.Word32(kCommandQueue + 32), 0u);  // the driver's read pointer did not move
  }
};

TEST_F(CorruptStatusTest, Checksum) {
  // Byte 100 of the element (parameter byte 20) is byte 4 of word 12 (bytes 96..103): byte 0 of its high half, so
  // the fold moves from 0 to 0x40. An event of 64 parameter bytes is checksummed over 48 + 32 + 64 = 144 bytes.
  region_.bytes()[kStatusElements + 100] ^= 0x40;
  ExpectError(
      "GSP status queue element 0 (shared-region offset 0x42000, message 0): checksum mismatch: the 64-bit "
      "XOR of its 144 bytes folds to 0x40, not 0");
}

TEST_F(CorruptStatusTest, Sequence) {
  // seqNum 0 -> 3 is the high half of word 4; checkSum, its low half, changes by the same 3 to keep the fold 0.
  region_.SetWord32(kStatusElements + 36, 3);
  region_.SetWord32(kStatusElements + 32, region_.Word32(kStatusElements + 32) ^ 3);
  ExpectError("GSP status queue element 0 (shared-region offset 0x42000, message 0): seqNum 3, expected 0");
}

TEST_F(CorruptStatusTest, ElemCountBeyondTheQueue) {
  region_.SetWord32(kStatusElements + 40, 17);
  ExpectError("element 0 (shared-region offset 0x42000, message 0): elemCount 17 is not 1..16");
}

TEST_F(CorruptStatusTest, ElemCountBeyondWhatWasPublished) {
  region_.SetWord32(kStatusElements + 40, 2);
  ExpectError("elemCount 2 but only 1 elements published (writePtr 1)");
}

TEST_F(CorruptStatusTest, LengthBeyondItsElements) {
  region_.SetWord32(kStatusElements + 56, 0x1000);  // 48 + 0x1000 > one element
  ExpectError("rpc length 4096 does not fit 1 element(s) (at least 32 bytes, at most 4048)");
}

TEST_F(CorruptStatusTest, HeaderVersionAndSignature) {
  // Each change is undone in checkSum (header_version is the low half of word 6, signature the high half).
  region_.SetWord32(kStatusElements + 48, 0x02000000);
  region_.SetWord32(kStatusElements + 32, region_.Word32(kStatusElements + 32) ^ 0x03000000 ^ 0x02000000);
  ExpectError("header_version 0x2000000, expected 0x3000000");
  region_.SetWord32(kStatusElements + 48, 0x03000000);
  region_.SetWord32(kStatusElements + 52, 0x43505257);
  region_.SetWord32(kStatusElements + 32, region_.Word32(kStatusElements + 32) ^ 0x03000000 ^ 0x02000000 ^ 1);
  ExpectError("signature 0x43505257, expected NV_VGPU_MSG_SIGNATURE_VALID 0x43505256");
}

TEST_F(CorruptStatusTest, WritePointerBeyondTheQueue) {
  region_.SetWord32(kStatusQueue + 16, 63);
  absl::StatusOr<std::optional<GspMessage>> bad = queue_->Poll();
  EXPECT_THAT(bad.status().message(), HasSubstr("GSP-RM's writePtr 63 is not below msgCount 63"));
}

TEST_F(MessageQueueTest, AContinuationRecordWithNoReplyIsAnError) {
  StartGsp();
  on_doorbell_ = [this] {
    ASSERT_TRUE(gsp_.ReadCommand().has_value());
    ASSERT_TRUE(gsp_.WriteEvent(NV_VGPU_MSG_FUNCTION_CONTINUATION_RECORD, Pattern(8, 0)).ok());
  };
  ASSERT_TRUE(queue_->SendRpc(NV_VGPU_MSG_FUNCTION_FREE, Pattern(16, 0), kTimeout).ok());
  absl::StatusOr<GspMessage> reply = queue_->WaitFor(NV_VGPU_MSG_FUNCTION_FREE, kTimeout);
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(reply.status().message(), HasSubstr("GSP status queue element 0: a continuation record with no reply "
                                                  "to continue (waiting for NV_VGPU_MSG_FUNCTION_FREE (0xa))"));
}

// The virtual GSP on its own thread, as GSP-RM runs beside the driver: it polls the command queue and answers while
// the driver sends and waits, so the queues' acquire/release ordering is what keeps the bytes intact (run under
// ThreadSanitizer too). 200 RPCs of assorted sizes, some longer than a record, wrap both queues many times.
TEST(MessageQueueConcurrencyTest, AGspThreadAnswersEveryRpc) {
  sim::testing::HostDeviceMemory memory;
  sim::testing::ScatteredRegion region(0x81);
  region.MapInto(memory);
  absl::StatusOr<std::unique_ptr<MessageQueue>> queue = MessageQueue::Create(region.bytes(), region.bus, [] {});
  ASSERT_TRUE(queue.ok()) << queue.status();
  std::atomic<bool> started = false, stop = false;
  std::vector<absl::Status> gsp_errors;
  std::thread gsp_thread([&] {
    sim::GspMessageQueue gsp(memory);
    const bool ok = gsp.Start((*queue)->init_arguments());
    started.store(true, std::memory_order_release);
    while (ok && !stop.load(std::memory_order_acquire) && !gsp.stopped()) {
      std::optional<sim::GspCommand> command = gsp.ReadCommand();
      if (!command) {
        std::this_thread::yield();
        continue;
      }
      std::vector<uint8_t> reply(command->payload.rbegin(), command->payload.rend());
      // The driver may not have made room yet: retry until it has, or until it is told to stop.
      absl::Status written;
      while (!(written = gsp.WriteReply(*command, regs::status::NV_OK, reply)).ok() &&
             written.code() == absl::StatusCode::kResourceExhausted && !stop.load(std::memory_order_acquire)) {
        std::this_thread::yield();
      }
    }
    gsp_errors = gsp.errors();
  });
  while (!started.load(std::memory_order_acquire)) std::this_thread::yield();

  for (uint32_t i = 0; i < 200; ++i) {
    // Every seventh a GSP_RM_CONTROL of 70000 bytes (two records, its paramsSize telling the GSP); the others
    // ALLOC_MEMORY of 100 to 12000 bytes.
    const bool large = i % 7 == 3;
    std::vector<uint8_t> payload = Pattern(large ? 70000 : 100 + (i * 997) % 11900, i);
    const uint32_t function = large ? NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL : NV_VGPU_MSG_FUNCTION_ALLOC_MEMORY;
    if (large) {
      rpc_gsp_rm_control_v03_00 control{};
      control.paramsSize = 70000 - sizeof(control);
      std::memcpy(payload.data(), &control, sizeof(control));
    }
    ASSERT_TRUE((*queue)->SendRpc(function, payload, kTimeout).ok()) << i;
    absl::StatusOr<GspMessage> reply = (*queue)->WaitFor(function, kTimeout, payload.size());
    ASSERT_TRUE(reply.ok()) << i << ": " << reply.status();
    ASSERT_EQ(reply->payload, std::vector<uint8_t>(payload.rbegin(), payload.rend())) << i;
  }
  stop.store(true, std::memory_order_release);
  gsp_thread.join();
  EXPECT_TRUE(gsp_errors.empty()) << gsp_errors.front();
}

}  // namespace
}  // namespace nv::gsp
