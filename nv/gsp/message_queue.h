// The driver's end of GSP-RM's message queues: the shared region in system memory (a page table of its own pages,
// the command queue the driver writes, the status queue GSP-RM writes), RPCs out and messages in.
//
// The layout is nouveau's (Linux 6.12 nvkm/subdev/gsp/r535.c r535_gsp_shared_init) and RM's (GspMsgQueuesInit):
//
//   page table   ALIGN(entries * 8, 4 KiB): the bus address of every 4 KiB page of the region, itself included
//   command q.   queue_size bytes: msgqTxHeader, then at +32 the driver's msgqRxHeader (its read pointer of the
//                status queue: MSGQ_FLAGS_SWAP_RX puts each reader's pointer in its own queue's header page),
//                the elements from +4 KiB
//   status q.    queue_size bytes, its header written by GSP-RM; at its rxHdrOff GSP-RM's read pointer of the
//                command queue
//
// A message is a GSP_MSG_QUEUE_ELEMENT header, an rpc_message_header_v and the parameters over elemCount consecutive
// elements (wrapping past the last element to the first), checksummed (nv/gsp/queue_element.h). RPCs longer than one
// record continue in NV_VGPU_MSG_FUNCTION_CONTINUATION_RECORD records (nouveau r535_gsp_rpc_push). After writing a
// record the driver publishes writePtr and rings the doorbell: a write of 0 to NV_PGSP_QUEUE_HEAD(0) (nouveau
// r535_gsp_cmdq_push writes the GSP falcon's register 0xc00; tinygrad NV_PGSP_QUEUE_HEAD[0]); the owner supplies the
// write.
//
// Not thread-safe: one thread at a time sends and receives (nouveau holds gsp->cmdq.mutex around both). The other
// agent is GSP-RM: the pointers are read with acquire and written with release ordering, the elements are plain
// memory ordered by them.
#ifndef BAREGPU_NV_GSP_MESSAGE_QUEUE_H_
#define BAREGPU_NV_GSP_MESSAGE_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nv/gsp/layouts.h"
#include "nv/gsp/queue_element.h"
#include "nv/regs/ad102.h"

namespace nv::gsp {

// The doorbell: a write of kDoorbellValue to NV_PGSP_QUEUE_HEAD(0) tells GSP-RM a command is queued (nouveau
// r535_gsp_cmdq_push writes 0 to the GSP falcon's register 0xc00; tinygrad NV_PGSP_QUEUE_HEAD[0].write(0x0)). The
// owner's Doorbell callback performs it; the virtual AD102's GSP falcon reacts to it.
inline constexpr uint32_t kDoorbellRegister = regs::ad102::NV_PGSP_QUEUE_HEAD::address(0);
inline constexpr uint32_t kDoorbellValue = 0;
static_assert(kDoorbellRegister == regs::ad102::kGsp.falcon + 0xc00);

// Where everything is in the shared region, for queues of `queue_size` bytes each.
struct SharedRegionLayout {
  uint32_t queue_size = 0;
  uint32_t page_table_entries = 0;  // MESSAGE_QUEUE_INIT_ARGUMENTS.pageTableEntryCount: every page of the region
  uint64_t command_queue_offset = 0;
  uint64_t status_queue_offset = 0;
  uint64_t size = 0;  // bytes: page table, command queue, status queue
};

// nouveau's r535_gsp_shared_init arithmetic: 2 * queue_size / 4 KiB pages for the queues, plus the pages their
// page table takes. queue_size must be a whole number of pages and hold more elements than the largest message
// (msgq keeps one element free); nouveau's and RM's 256 KiB (63 elements) by default.
absl::StatusOr<SharedRegionLayout> LayoutSharedRegion(uint32_t queue_size = kDefaultQueueSize);

// One message from GSP-RM: a reply to an RPC (the RPC's function number) or an event (NV_VGPU_MSG_EVENT_*).
struct GspMessage {
  uint32_t function = 0;
  uint32_t rpc_result = 0;  // an NV_STATUS
  uint32_t rpc_result_private = 0;
  uint32_t sequence = 0;         // rpc_message_header_v.sequence
  uint32_t element_index = 0;    // the status-queue element it started at
  std::vector<uint8_t> payload;  // the parameters (continuation records appended)
};

// One RPC as it crossed the queues, for traces (`baregpu boot --trace=rpc`).
struct RpcTrace {
  bool sent = false;         // driver to GSP-RM (a whole RPC, continuation records included), or GSP-RM to driver
  uint32_t function = 0;     // function or event number
  uint32_t rpc_result = 0;   // received messages: the NV_STATUS
  size_t payload_bytes = 0;  // parameters
};

class MessageQueue {
 public:
  using Doorbell = std::function<void()>;
  using EventHandler = std::function<void(const GspMessage&)>;
  using Tracer = std::function<void(const RpcTrace&)>;

  // Lays out the queues in `memory` (the host's view of the region, 8-byte aligned, exactly layout.size bytes)
  // whose 4 KiB pages the GSP reaches at `page_bus_addresses` (one per page, page-aligned, any order), zeroing it,
  // writing the page table and the command queue's header. `doorbell` is the BAR0 write that tells the GSP a
  // command is there.
  static absl::StatusOr<std::unique_ptr<MessageQueue>> Create(std::span<uint8_t> memory,
                                                              std::span<const uint64_t> page_bus_addresses,
                                                              Doorbell doorbell,
                                                              uint32_t queue_size = kDefaultQueueSize);

  // What GSP_ARGUMENTS_CACHED.messageQueueInitArguments must hold (nouveau r535_gsp_rmargs_init): the region's
  // first page, the page-table length and the queues' offsets. The lockless queue offsets stay 0, as nouveau's.
  const MESSAGE_QUEUE_INIT_ARGUMENTS& init_arguments() const { return init_arguments_; }
  const SharedRegionLayout& layout() const { return layout_; }

  // Receives the events (and replies nobody waits for) that arrive while WaitFor waits; without one they are
  // dropped (nouveau's r535_gsp_msg_recv hands them to its notifiers or dumps them).
  void set_event_handler(EventHandler handler) { event_handler_ = std::move(handler); }
  // Told of every RPC sent and every message received (complete records; continuations as they arrive).
  void set_tracer(Tracer tracer) { tracer_ = std::move(tracer); }

  // Sends one RPC: a record with `function` and up to kMaxRecordPayload bytes, then CONTINUATION_RECORDs for the
  // rest, waiting up to `timeout` in all for the GSP to free room. Copies straight into the queue: no allocation.
  absl::Status SendRpc(uint32_t function, std::span<const uint8_t> payload, absl::Duration timeout);

  // One complete message from the status queue, validated (checksum, sequence, elemCount, length, header version
  // and signature) and consumed, or nullopt when none is there (or GSP-RM has not yet created the status queue).
  // A corrupt message is an error that names the element and leaves it unconsumed.
  absl::StatusOr<std::optional<GspMessage>> Poll();

  // Waits up to `timeout` for the reply to `function`, passing everything else to the event handler. A reply of
  // `reply_payload_size` bytes longer than one record arrives as continuation records, which are appended; 0 takes
  // the reply's first record as it is. A non-zero rpc_result is an error naming the NV_STATUS.
  absl::StatusOr<GspMessage> WaitFor(uint32_t function, absl::Duration timeout, size_t reply_payload_size = 0);
  // WaitFor, but a reply with a non-zero rpc_result is returned like any other: GSP_RM_ALLOC's caller reads the
  // NV_STATUS from the reply's parameters then (RM's rpcRmApiAlloc_GSP takes rpc_params->status when the RPC fails).
  absl::StatusOr<GspMessage> WaitForReply(uint32_t function, absl::Duration timeout, size_t reply_payload_size = 0);

  // The next seqNum of each direction (RM's txSeqNum / rxSeqNum).
  uint32_t sent_messages() const { return tx_sequence_; }
  uint32_t received_messages() const { return rx_sequence_; }

 private:
  MessageQueue(std::span<uint8_t> memory, const SharedRegionLayout& layout, Doorbell doorbell);

  absl::Status SendRecord(uint32_t function, std::span<const uint8_t> payload, absl::Time deadline);
  absl::StatusOr<GspMessage> Wait(uint32_t function, absl::Duration timeout, size_t reply_payload_size,
                                  bool fail_on_rpc_result);
  // Links the status queue once GSP-RM has written its header (msgqRxLink's checks); false while entryOff is 0.
  absl::StatusOr<bool> LinkStatusQueue();
  // Copies message bytes [offset, offset + size) of the message starting at element `first` of a queue.
  void WriteCommandBytes(uint32_t first, uint64_t offset, std::span<const uint8_t> bytes);
  void ZeroCommandBytes(uint32_t first, uint64_t offset, uint64_t size);
  void ReadStatusBytes(uint32_t first, uint64_t offset, std::span<uint8_t> out) const;
  template <typename Visit>
  void ForEachStatusChunk(uint32_t first, uint64_t offset, uint64_t size, Visit visit) const;

  uint32_t LoadShared32(uint64_t offset) const;
  void StoreShared32(uint64_t offset, uint32_t value);

  std::span<uint8_t> memory_;
  SharedRegionLayout layout_;
  MESSAGE_QUEUE_INIT_ARGUMENTS init_arguments_{};
  Doorbell doorbell_;
  EventHandler event_handler_;
  Tracer tracer_;

  uint32_t command_count_ = 0;  // command queue msgCount
  uint32_t write_ptr_ = 0;      // the command queue's writePtr, as last published
  uint32_t tx_sequence_ = 0;

  bool status_linked_ = false;
  uint32_t status_count_ = 0;         // status queue msgCount (from GSP-RM's header)
  uint64_t status_entries_ = 0;       // shared-region offset of the status queue's element 0
  uint64_t gsp_read_ptr_offset_ = 0;  // where GSP-RM's read pointer of the command queue is
  uint32_t read_ptr_ = 0;             // the status queue's readPtr, as last published
  uint32_t rx_sequence_ = 0;
};

}  // namespace nv::gsp

#endif  // BAREGPU_NV_GSP_MESSAGE_QUEUE_H_
