// GSP-RM's end of its message queues, in the virtual AD102: what the GSP sees of the shared region the driver
// described in GSP_ARGUMENTS_CACHED.messageQueueInitArguments, reached only through the region's page table and
// the device's DMA (DeviceMemory). It reads the driver's command queue and writes the status queue.
//
// GSP-RM's own queue code is not public. What the model checks is what the shared msgq code (open-gpu-kernel-modules
// 535.113.01 src/common/shared/msgq/msgq.c: msgqTxCreate, msgqRxLink, the pointer arithmetic) and RM's receive of a
// message (message_queue_cpu.c GspMsgQueueReceiveStatus, the CPU side of the same format: checksum, seqNum,
// elemCount, length) check, applied to the command queue; the layout is nouveau's (Linux 6.12 r535.c
// r535_gsp_shared_init, r535_gsp_cmdq_push, r535_gsp_rpc_push), the other judge being tinygrad's NVRpcQueue.
// Shared-region offsets, element numbers and the framing constants are nv/gsp/queue_element.h's.
//
// A driver mistake (a bad page-table entry, a corrupt header, a wrong checksum or sequence number, a continuation
// nobody started) is recorded in errors() with what, where and why, and stops the command queue there, as GSP-RM
// stops answering: the element is not consumed. Nothing the driver writes crashes the model.
#ifndef BAREGPU_NV_SIM_GSP_MESSAGE_QUEUE_H_
#define BAREGPU_NV_SIM_GSP_MESSAGE_QUEUE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "nv/gsp/layouts.h"
#include "nv/sim/bar0_block.h"

namespace nv::sim {

// One RPC from the driver, continuation records appended.
struct GspCommand {
  uint32_t function = 0;
  uint32_t sequence = 0;       // rpc_message_header_v.sequence of its first record
  uint32_t first_element = 0;  // the command-queue element its first record started at
  uint32_t records = 0;        // 1 + continuation records
  std::vector<uint8_t> payload;
};

class GspMessageQueue {
 public:
  // The parameter bytes the RPC whose first record carries `first` has in all; more than first.size() means
  // CONTINUATION_RECORDs follow. The RPC's own structure says: GSP-RM cannot tell otherwise.
  using RpcSizer = std::function<uint64_t(uint32_t function, std::span<const uint8_t> first)>;
  // The RPCs that nouveau sends longer than a record: GSP_RM_CONTROL and GSP_RM_ALLOC (their structure and
  // paramsSize; r535_gsp_rpc_rm_ctrl_get, r535_gsp_rpc_rm_alloc_get) and SET_REGISTRY (PACKED_REGISTRY_TABLE.size;
  // build_registry). Every other RPC is its first record.
  static uint64_t DefaultRpcSize(uint32_t function, std::span<const uint8_t> first);

  // The model's own bound on the shared region (no source: RM's largest, pre-silicon, is 6 * 256 KiB of command
  // queue): 64 Ki pages, 256 MiB.
  static constexpr uint32_t kMaxSharedPages = 1u << 16;

  explicit GspMessageQueue(DeviceMemory& memory, RpcSizer sizer = DefaultRpcSize);

  // What GSP-RM does with messageQueueInitArguments at start: reads the page table (every entry a reachable 4 KiB
  // page), links the driver's command queue (msgqRxLink's checks), creates the status queue (msgqTxCreate) and
  // zeroes its own read pointer. False when the driver got something wrong (recorded).
  bool Start(const gsp::MESSAGE_QUEUE_INIT_ARGUMENTS& arguments);

  // The next whole RPC in the command queue, or nullopt when there is none yet (or the queue stopped at an error).
  std::optional<GspCommand> ReadCommand();

  // Puts a reply to `command` (its function and sequence, `rpc_result` an NV_STATUS) or an event into the status
  // queue, in continuation records when longer than one. ResourceExhausted while the driver has not freed room
  // for all of it (nothing is written); FailedPrecondition before Start or after an error.
  absl::Status WriteReply(const GspCommand& command, uint32_t rpc_result, std::span<const uint8_t> payload);
  absl::Status WriteEvent(uint32_t function, std::span<const uint8_t> payload);

  const std::vector<absl::Status>& errors() const { return errors_; }
  bool started() const { return started_; }
  bool stopped() const { return stopped_; }
  uint32_t commands_read() const { return rx_sequence_; }
  uint32_t status_written() const { return tx_sequence_; }

 private:
  struct Queue {
    uint64_t offset = 0;  // in the shared region
    uint32_t size = 0;
    uint32_t count = 0;      // msgCount
    uint32_t entries = 0;    // entryOff
    uint32_t rx_header = 0;  // rxHdrOff
  };

  void Fail(std::string what);
  // Shared-region accesses through the page table; false (and an error recorded) when the DMA does not reach.
  bool ReadShared(uint64_t offset, std::span<uint8_t> out, const char* what);
  bool WriteShared(uint64_t offset, std::span<const uint8_t> data, const char* what);
  bool ReadShared32(uint64_t offset, uint32_t* value, const char* what);
  bool WriteShared32(uint64_t offset, uint32_t value, const char* what);
  // Message bytes [offset, offset + size) of the message at element `first` of `queue`, wrapping.
  bool ReadMessage(const Queue& queue, uint32_t first, uint64_t offset, std::span<uint8_t> out);
  bool WriteMessage(const Queue& queue, uint32_t first, uint64_t offset, std::span<const uint8_t> data);
  uint64_t ElementOffset(const Queue& queue, uint32_t element) const;

  // One record off the command queue into record_, or nullopt.
  bool ReadRecord(uint32_t* function, uint32_t* sequence, uint32_t* first, std::span<const uint8_t>* payload);
  absl::Status WriteStatus(uint32_t function, uint32_t sequence, uint32_t result, std::span<const uint8_t> payload);

  DeviceMemory& memory_;
  RpcSizer sizer_;
  std::vector<uint64_t> pages_;  // the page table: bus address of each shared-region page
  Queue command_;
  Queue status_;
  bool started_ = false;
  bool stopped_ = false;
  std::vector<absl::Status> errors_;

  uint32_t read_ptr_ = 0;  // ours, of the command queue
  uint32_t rx_sequence_ = 0;
  uint32_t write_ptr_ = 0;  // ours, of the status queue
  uint32_t tx_sequence_ = 0;
  std::vector<uint8_t> record_;        // staging for one record (GSP_MSG_QUEUE_ELEMENT_SIZE_MAX, as RM's work area)
  std::optional<GspCommand> pending_;  // an RPC waiting for its continuation records
  uint64_t pending_size_ = 0;
};

}  // namespace nv::sim

#endif  // BAREGPU_NV_SIM_GSP_MESSAGE_QUEUE_H_
