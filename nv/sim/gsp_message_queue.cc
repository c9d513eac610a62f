#include "nv/sim/gsp_message_queue.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nv/gsp/queue_element.h"
#include "nv/regs/names.h"
#include "nv/regs/rpc_constants.h"
#include "nv/regs/status_constants.h"

namespace nv::sim {
namespace {

using gsp::GSP_MSG_QUEUE_ELEMENT;
using gsp::kElementHeaderSize;
using gsp::kMaxElementsPerMessage;
using gsp::kMaxRecordPayload;
using gsp::kQueueElementSize;
using gsp::kRpcHeaderSize;
using gsp::kRxHeaderOffset;
using gsp::kSharedPageSize;
using gsp::MESSAGE_QUEUE_INIT_ARGUMENTS;
using gsp::msgqRxHeader;
using gsp::msgqTxHeader;
using regs::rpc::NV_VGPU_MSG_FUNCTION_CONTINUATION_RECORD;

constexpr uint64_t kWritePtrOffset = offsetof(msgqTxHeader, writePtr);

std::string RpcLabel(uint32_t function) {
  absl::string_view name = regs::RpcName(function);
  return name.empty() ? absl::StrFormat("RPC %#x", function) : absl::StrFormat("%s (%#x)", name, function);
}

// The uint32_t at `offset` of a structure's bytes (the structure may be unaligned in `bytes`).
template <typename T>
T Load(std::span<const uint8_t> bytes, size_t offset = 0) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

}  // namespace

uint64_t GspMessageQueue::DefaultRpcSize(uint32_t function, std::span<const uint8_t> first) {
  switch (function) {
    case regs::rpc::NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL:
      if (first.size() >= sizeof(gsp::rpc_gsp_rm_control_v03_00)) {
        return sizeof(gsp::rpc_gsp_rm_control_v03_00) +
               uint64_t{Load<uint32_t>(first, offsetof(gsp::rpc_gsp_rm_control_v03_00, paramsSize))};
      }
      break;
    case regs::rpc::NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC:
      if (first.size() >= sizeof(gsp::rpc_gsp_rm_alloc_v03_00)) {
        return sizeof(gsp::rpc_gsp_rm_alloc_v03_00) +
               uint64_t{Load<uint32_t>(first, offsetof(gsp::rpc_gsp_rm_alloc_v03_00, paramsSize))};
      }
      break;
    case regs::rpc::NV_VGPU_MSG_FUNCTION_SET_REGISTRY:
      if (first.size() >= sizeof(gsp::PACKED_REGISTRY_TABLE)) {
        return Load<uint32_t>(first, offsetof(gsp::PACKED_REGISTRY_TABLE, size));
      }
      break;
    default:
      break;
  }
  return first.size();
}

GspMessageQueue::GspMessageQueue(DeviceMemory& memory, RpcSizer sizer)
    : memory_(memory), sizer_(std::move(sizer)), record_(gsp::kMaxMessageSize) {}

void GspMessageQueue::Fail(std::string what) {
  errors_.push_back(absl::FailedPreconditionError(absl::StrCat("virtual GSP-RM message queues: ", what)));
  stopped_ = true;
}

bool GspMessageQueue::ReadShared(uint64_t offset, std::span<uint8_t> out, const char* what) {
  while (!out.empty()) {
    const uint64_t page = offset / kSharedPageSize;
    const uint64_t within = offset % kSharedPageSize;
    const size_t n = std::min<uint64_t>(out.size(), kSharedPageSize - within);
    if (page >= pages_.size()) {
      Fail(absl::StrFormat("reading %s: shared-region offset %#x is beyond its %u pages", what, offset, pages_.size()));
      return false;
    }
    if (!memory_.ReadSystem(pages_[page] + within, out.first(n))) {
      Fail(
          absl::StrFormat("reading %s: DMA from bus address %#x (shared-region offset %#x, page-table entry %u) "
                          "reaches no mapped memory",
                          what, pages_[page] + within, offset, page));
      return false;
    }
    out = out.subspan(n);
    offset += n;
  }
  return true;
}

bool GspMessageQueue::WriteShared(uint64_t offset, std::span<const uint8_t> data, const char* what) {
  while (!data.empty()) {
    const uint64_t page = offset / kSharedPageSize;
    const uint64_t within = offset % kSharedPageSize;
    const size_t n = std::min<uint64_t>(data.size(), kSharedPageSize - within);
    if (page >= pages_.size()) {
      Fail(absl::StrFormat("writing %s: shared-region offset %#x is beyond its %u pages", what, offset, pages_.size()));
      return false;
    }
    if (!memory_.WriteSystem(pages_[page] + within, data.first(n))) {
      Fail(
          absl::StrFormat("writing %s: DMA to bus address %#x (shared-region offset %#x, page-table entry %u) "
                          "reaches no mapped memory",
                          what, pages_[page] + within, offset, page));
      return false;
    }
    data = data.subspan(n);
    offset += n;
  }
  return true;
}

bool GspMessageQueue::ReadShared32(uint64_t offset, uint32_t* value, const char* what) {
  return ReadShared(offset, std::span(reinterpret_cast<uint8_t*>(value), sizeof(*value)), what);
}

bool GspMessageQueue::WriteShared32(uint64_t offset, uint32_t value, const char* what) {
  return WriteShared(offset, std::span(reinterpret_cast<const uint8_t*>(&value), sizeof(value)), what);
}

uint64_t GspMessageQueue::ElementOffset(const Queue& queue, uint32_t element) const {
  return queue.offset + queue.entries + uint64_t{element} * kQueueElementSize;
}

bool GspMessageQueue::ReadMessage(const Queue& queue, uint32_t first, uint64_t offset, std::span<uint8_t> out) {
  while (!out.empty()) {
    const uint32_t element = static_cast<uint32_t>((first + offset / kQueueElementSize) % queue.count);
    const uint64_t within = offset % kQueueElementSize;
    const size_t n = std::min<uint64_t>(out.size(), kQueueElementSize - within);
    if (!ReadShared(ElementOffset(queue, element) + within, out.first(n), "a command-queue element")) return false;
    out = out.subspan(n);
    offset += n;
  }
  return true;
}

bool GspMessageQueue::WriteMessage(const Queue& queue, uint32_t first, uint64_t offset, std::span<const uint8_t> data) {
  while (!data.empty()) {
    const uint32_t element = static_cast<uint32_t>((first + offset / kQueueElementSize) % queue.count);
    const uint64_t within = offset % kQueueElementSize;
    const size_t n = std::min<uint64_t>(data.size(), kQueueElementSize - within);
    if (!WriteShared(ElementOffset(queue, element) + within, data.first(n), "a status-queue element")) return false;
    data = data.subspan(n);
    offset += n;
  }
  return true;
}

bool GspMessageQueue::Start(const MESSAGE_QUEUE_INIT_ARGUMENTS& arguments) {
  if (started_ || stopped_) {
    Fail("messageQueueInitArguments handed over twice");
    return false;
  }
  // --- the page table: entry p of the table lives in page p * 8 / 4 KiB, whose address the table gives earlier ---
  const uint32_t entries = arguments.pageTableEntryCount;
  if (arguments.sharedMemPhysAddr % kSharedPageSize != 0) {
    Fail(absl::StrFormat("sharedMemPhysAddr %#x is not 4 KiB aligned", arguments.sharedMemPhysAddr));
    return false;
  }
  const uint64_t table_pages = (uint64_t{entries} * sizeof(uint64_t) + kSharedPageSize - 1) / kSharedPageSize;
  if (entries == 0 || entries > kMaxSharedPages || table_pages >= entries) {
    Fail(
        absl::StrFormat("pageTableEntryCount %u: must cover the page table (%u pages) and the queues, and stay "
                        "within the model's %u pages",
                        entries, table_pages, kMaxSharedPages));
    return false;
  }
  pages_.assign(1, arguments.sharedMemPhysAddr);  // the table's first page is the region's first (RM: pPageTbl[0])
  pages_.reserve(entries);
  for (uint32_t i = 0; i < entries; ++i) {
    uint64_t pte;
    if (!ReadShared(uint64_t{i} * sizeof(uint64_t), std::span(reinterpret_cast<uint8_t*>(&pte), sizeof(pte)),
                    "the page table")) {
      return false;
    }
    if (i == 0) {
      if (pte != arguments.sharedMemPhysAddr) {
        Fail(absl::StrFormat("page-table entry 0 is %#x, not sharedMemPhysAddr %#x (the table maps itself first)", pte,
                             arguments.sharedMemPhysAddr));
        return false;
      }
      continue;
    }
    pages_.push_back(pte);
  }
  std::vector<uint8_t> page(kSharedPageSize);
  for (uint32_t i = 0; i < entries; ++i) {
    if (pages_[i] % kSharedPageSize != 0) {
      Fail(absl::StrFormat("page-table entry %u (shared-region offset %#x) is %#x, not 4 KiB aligned", i,
                           uint64_t{i} * sizeof(uint64_t), pages_[i]));
      return false;
    }
    if (!memory_.ReadSystem(pages_[i], page)) {
      Fail(absl::StrFormat("page-table entry %u (shared-region offset %#x) is %#x, which reaches no mapped memory", i,
                           uint64_t{i} * sizeof(uint64_t), pages_[i]));
      return false;
    }
  }

  // --- where the queues are ---
  const uint64_t region = uint64_t{entries} * kSharedPageSize;
  const uint64_t cmd = arguments.cmdQueueOffset;
  const uint64_t stat = arguments.statQueueOffset;
  if (cmd % kSharedPageSize != 0 || stat % kSharedPageSize != 0 || cmd < table_pages * kSharedPageSize || stat <= cmd ||
      stat >= region || stat - cmd > UINT32_MAX || region - stat > UINT32_MAX) {
    Fail(
        absl::StrFormat("cmdQueueOffset %#x / statQueueOffset %#x: the queues must be page-aligned, after the "
                        "%#x-byte page table, in that order, inside the %#x-byte region",
                        cmd, stat, table_pages * kSharedPageSize, region));
    return false;
  }
  command_.offset = cmd;
  command_.size = static_cast<uint32_t>(stat - cmd);
  status_.offset = stat;
  status_.size = static_cast<uint32_t>(region - stat);

  // --- the driver's command queue, as msgqRxLink checks it ---
  msgqTxHeader tx;
  if (!ReadShared(cmd, std::span(reinterpret_cast<uint8_t*>(&tx), sizeof(tx)), "the command queue's header")) {
    return false;
  }
  auto bad = [&](absl::string_view why) {
    Fail(absl::StrFormat(
        "command queue header (shared-region offset %#x): %s (version %u, size %#x, msgSize %#x, "
        "msgCount %u, writePtr %u, flags %#x, rxHdrOff %#x, entryOff %#x)",
        cmd, why, tx.version, tx.size, tx.msgSize, tx.msgCount, tx.writePtr, tx.flags, tx.rxHdrOff, tx.entryOff));
    return false;
  };
  if (tx.version != regs::gsp::MSGQ_VERSION) return bad("version is not MSGQ_VERSION");
  if (tx.size != command_.size) {
    return bad(absl::StrFormat("size is not statQueueOffset - cmdQueueOffset (%#x)", command_.size));
  }
  if (tx.msgSize != kQueueElementSize) return bad("msgSize is not GSP_MSG_QUEUE_ELEMENT_SIZE_MIN (0x1000)");
  if (tx.rxHdrOff < sizeof(msgqTxHeader) || tx.rxHdrOff % alignof(uint32_t) != 0) {
    return bad("rxHdrOff overlaps the msgqTxHeader or is misaligned");
  }
  if (tx.entryOff < kRxHeaderOffset + sizeof(msgqRxHeader) || tx.rxHdrOff + sizeof(msgqRxHeader) > tx.entryOff) {
    return bad("the rx header and the entries overlap");
  }
  if (tx.entryOff % kQueueElementSize != 0) return bad("entryOff is not element-aligned (GSP_MSG_QUEUE_ELEMENT_ALIGN)");
  if (uint64_t{tx.entryOff} + tx.msgSize > tx.size) return bad("no room for one element");
  if (tx.msgCount != (tx.size - tx.entryOff) / tx.msgSize) return bad("msgCount does not match size and entryOff");
  if ((tx.flags & regs::gsp::MSGQ_FLAGS_SWAP_RX) == 0) {
    return bad("MSGQ_FLAGS_SWAP_RX is clear (the model keeps the read pointers where nouveau and RM swap them)");
  }
  if (tx.msgCount <= kMaxElementsPerMessage) return bad("too few elements for the largest message (16)");
  if (tx.writePtr >= tx.msgCount) return bad("writePtr is not below msgCount");
  command_.count = tx.msgCount;
  command_.entries = tx.entryOff;
  command_.rx_header = tx.rxHdrOff;

  // --- our status queue: msgqTxCreate with GSP_MSG_QUEUE_HEADER_ALIGN and GSP_MSG_QUEUE_ELEMENT_ALIGN ---
  status_.entries = gsp::kQueueHeaderSize;
  status_.rx_header = kRxHeaderOffset;
  if (status_.size < status_.entries + uint64_t{kMaxElementsPerMessage + 1} * kQueueElementSize) {
    Fail(
        absl::StrFormat("the status queue (%#x bytes from shared-region offset %#x) holds fewer than the %u "
                        "elements of the largest message",
                        status_.size, stat, kMaxElementsPerMessage + 1));
    return false;
  }
  status_.count = (status_.size - status_.entries) / kQueueElementSize;
  // msgqRxLink zeroes our read pointer of their queue (in our header page: MSGQ_FLAGS_SWAP_RX) ...
  if (!WriteShared32(stat + status_.rx_header, 0, "the command queue's read pointer")) return false;
  // ... and msgqTxCreate writes the header; entryOff last, which tinygrad polls for.
  msgqTxHeader header{};
  header.version = regs::gsp::MSGQ_VERSION;
  header.size = status_.size;
  header.msgSize = kQueueElementSize;
  header.msgCount = status_.count;
  header.writePtr = 0;
  header.flags = regs::gsp::MSGQ_FLAGS_SWAP_RX;
  header.rxHdrOff = status_.rx_header;
  header.entryOff = status_.entries;
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(&header), sizeof(header));
  if (!WriteShared(stat, bytes.first(offsetof(msgqTxHeader, entryOff)), "the status queue's header") ||
      !WriteShared32(stat + offsetof(msgqTxHeader, entryOff), header.entryOff, "the status queue's header")) {
    return false;
  }
  started_ = true;
  return true;
}

bool GspMessageQueue::ReadRecord(uint32_t* function, uint32_t* sequence, uint32_t* first,
                                 std::span<const uint8_t>* payload) {
  uint32_t driver_write;
  if (!ReadShared32(command_.offset + kWritePtrOffset, &driver_write, "the command queue's writePtr")) return false;
  if (driver_write >= command_.count) {
    Fail(absl::StrFormat("command queue: the driver's writePtr %u (shared-region offset %#x) is not below msgCount %u",
                         driver_write, command_.offset + kWritePtrOffset, command_.count));
    return false;
  }
  const uint32_t available = (driver_write + command_.count - read_ptr_) % command_.count;
  if (available == 0) return false;

  *first = read_ptr_;
  const uint64_t where = ElementOffset(command_, read_ptr_);
  GSP_MSG_QUEUE_ELEMENT header;
  if (!ReadMessage(command_, read_ptr_, 0, std::span(reinterpret_cast<uint8_t*>(&header), sizeof(header)))) {
    return false;
  }
  auto bad = [&](absl::string_view why) {
    Fail(absl::StrFormat("command queue element %u (shared-region offset %#x, command %u): %s", read_ptr_, where,
                         rx_sequence_, why));
    return false;
  };
  if (header.elemCount == 0 || header.elemCount > kMaxElementsPerMessage) {
    return bad(absl::StrFormat("elemCount %u is not 1..%u", header.elemCount, kMaxElementsPerMessage));
  }
  if (header.elemCount > available) {
    return bad(absl::StrFormat("elemCount %u but the driver published only %u elements (writePtr %u)", header.elemCount,
                               available, driver_write));
  }
  const uint64_t message_size = uint64_t{kElementHeaderSize} + header.rpc.length;
  if (message_size < gsp::kMinMessageSize || message_size > uint64_t{header.elemCount} * kQueueElementSize) {
    return bad(absl::StrFormat("rpc length %u does not fit its %u element(s) (at least %u, at most %u)",
                               header.rpc.length, header.elemCount, gsp::kMinMessageSize - kElementHeaderSize,
                               header.elemCount * kQueueElementSize - kElementHeaderSize));
  }
  const uint64_t checked = gsp::ChecksummedBytes(header.rpc.length);
  const std::span<uint8_t> message = std::span(record_).first(checked);
  if (!ReadMessage(command_, read_ptr_, 0, message)) return false;
  gsp::ElementChecksum checksum;
  checksum.Add(message);
  if (checksum.Fold() != 0) {
    return bad(absl::StrFormat("checksum mismatch: the 64-bit XOR of its %u bytes folds to %#x, not 0 (checkSum %#x)",
                               checked, checksum.Fold(), header.checkSum));
  }
  if (header.seqNum != rx_sequence_) return bad(absl::StrFormat("seqNum %u, expected %u", header.seqNum, rx_sequence_));
  if (header.rpc.header_version != gsp::kRpcHeaderVersion) {
    return bad(absl::StrFormat("header_version %#x, expected %#x", header.rpc.header_version, gsp::kRpcHeaderVersion));
  }
  if (header.rpc.signature != regs::gsp::NV_VGPU_MSG_SIGNATURE_VALID) {
    return bad(absl::StrFormat("signature %#x, expected NV_VGPU_MSG_SIGNATURE_VALID %#x", header.rpc.signature,
                               regs::gsp::NV_VGPU_MSG_SIGNATURE_VALID));
  }

  read_ptr_ = (read_ptr_ + header.elemCount) % command_.count;
  if (!WriteShared32(status_.offset + status_.rx_header, read_ptr_, "the command queue's read pointer")) return false;
  ++rx_sequence_;
  *function = header.rpc.function;
  *sequence = header.rpc.sequence;
  *payload = std::span<const uint8_t>(record_).subspan(sizeof(header), header.rpc.length - kRpcHeaderSize);
  return true;
}

std::optional<GspCommand> GspMessageQueue::ReadCommand() {
  if (!started_ || stopped_) return std::nullopt;
  uint32_t function, sequence, first;
  std::span<const uint8_t> payload;
  while (ReadRecord(&function, &sequence, &first, &payload)) {
    if (function == NV_VGPU_MSG_FUNCTION_CONTINUATION_RECORD) {
      if (!pending_) {
        Fail(absl::StrFormat("command queue element %u: a continuation record (command %u) with no RPC to continue",
                             first, rx_sequence_ - 1));
        return std::nullopt;
      }
      if (pending_->payload.size() + payload.size() > pending_size_) {
        Fail(absl::StrFormat(
            "command queue element %u: a %u-byte continuation record overruns %s's %u parameter "
            "bytes (%u so far)",
            first, payload.size(), RpcLabel(pending_->function), pending_size_, pending_->payload.size()));
        return std::nullopt;
      }
      pending_->payload.insert(pending_->payload.end(), payload.begin(), payload.end());
      ++pending_->records;
      if (pending_->payload.size() == pending_size_) {
        std::optional<GspCommand> done = std::move(pending_);
        pending_.reset();
        return done;
      }
      continue;
    }
    if (pending_) {
      Fail(
          absl::StrFormat("command queue element %u: %s while %s (element %u) had %u of its %u parameter bytes; "
                          "expected a continuation record",
                          first, RpcLabel(function), RpcLabel(pending_->function), pending_->first_element,
                          pending_->payload.size(), pending_size_));
      return std::nullopt;
    }
    GspCommand command;
    command.function = function;
    command.sequence = sequence;
    command.first_element = first;
    command.records = 1;
    command.payload.assign(payload.begin(), payload.end());
    const uint64_t size = sizer_ ? sizer_(function, payload) : payload.size();
    if (size <= payload.size()) return command;
    // A record that continues is a full one: it takes all 16 elements (nouveau's max_rpc_size and tinygrad's
    // send_rpc max_payload both fill them exactly).
    if (gsp::ElementsForRpcLength(kRpcHeaderSize + static_cast<uint32_t>(payload.size())) != kMaxElementsPerMessage) {
      Fail(
          absl::StrFormat("command queue element %u: %s declares %u parameter bytes but its record carries %u and "
                          "is not full (a record followed by continuation records takes %u elements)",
                          first, RpcLabel(function), size, payload.size(), kMaxElementsPerMessage));
      return std::nullopt;
    }
    pending_ = std::move(command);
    pending_size_ = size;
  }
  return std::nullopt;
}

absl::Status GspMessageQueue::WriteReply(const GspCommand& command, uint32_t rpc_result,
                                         std::span<const uint8_t> payload) {
  return WriteStatus(command.function, command.sequence, rpc_result, payload);
}

absl::Status GspMessageQueue::WriteEvent(uint32_t function, std::span<const uint8_t> payload) {
  return WriteStatus(function, /*sequence=*/0, regs::status::NV_OK, payload);
}

absl::Status GspMessageQueue::WriteStatus(uint32_t function, uint32_t sequence, uint32_t result,
                                          std::span<const uint8_t> payload) {
  if (!started_ || stopped_) {
    return absl::FailedPreconditionError(absl::StrFormat("virtual GSP-RM cannot send %s: its message queues are %s",
                                                         RpcLabel(function),
                                                         stopped_ ? "stopped at a driver error" : "not started"));
  }
  // Records as the driver splits them (nouveau r535_gsp_rpc_push), all room checked before the first is written.
  uint64_t elements = 0;
  for (uint64_t offset = 0; offset == 0 || offset < payload.size(); offset += kMaxRecordPayload) {
    const uint64_t n = std::min<uint64_t>(payload.size() - offset, kMaxRecordPayload);
    elements += gsp::ElementsForRpcLength(kRpcHeaderSize + static_cast<uint32_t>(n));
  }
  uint32_t driver_read;
  if (!ReadShared32(command_.offset + command_.rx_header, &driver_read, "the status queue's read pointer")) {
    return errors_.back();
  }
  if (driver_read >= status_.count) {
    Fail(absl::StrFormat("status queue: the driver's readPtr %u (shared-region offset %#x) is not below msgCount %u",
                         driver_read, command_.offset + command_.rx_header, status_.count));
    return errors_.back();
  }
  const uint32_t free = (driver_read + status_.count - write_ptr_ - 1) % status_.count;
  if (free < elements) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "virtual GSP-RM: status queue full for %s (%u elements needed, %u free; driver readPtr %u, writePtr %u)",
        RpcLabel(function), elements, free, driver_read, write_ptr_));
  }

  for (uint64_t offset = 0; offset == 0 || offset < payload.size(); offset += kMaxRecordPayload) {
    const std::span<const uint8_t> part =
        payload.subspan(offset, std::min<uint64_t>(payload.size() - offset, kMaxRecordPayload));
    const uint32_t rpc_length = kRpcHeaderSize + static_cast<uint32_t>(part.size());
    const uint32_t count = gsp::ElementsForRpcLength(rpc_length);
    GSP_MSG_QUEUE_ELEMENT header{};
    header.seqNum = tx_sequence_;
    header.elemCount = count;
    header.rpc.header_version = gsp::kRpcHeaderVersion;
    header.rpc.signature = regs::gsp::NV_VGPU_MSG_SIGNATURE_VALID;
    header.rpc.length = rpc_length;
    header.rpc.function = offset == 0 ? function : NV_VGPU_MSG_FUNCTION_CONTINUATION_RECORD;
    header.rpc.rpc_result = result;
    header.rpc.rpc_result_private = result;
    header.rpc.sequence = sequence;
    gsp::ElementChecksum checksum;
    const std::span<const uint8_t> header_bytes(reinterpret_cast<const uint8_t*>(&header), sizeof(header));
    checksum.Add(header_bytes);
    checksum.Add(part);
    header.checkSum = checksum.Fold();

    // The record in the staging buffer, zero to the end of its last element, then into the queue.
    std::fill(record_.begin(), record_.begin() + uint64_t{count} * kQueueElementSize, 0);
    std::memcpy(record_.data(), &header, sizeof(header));
    std::copy(part.begin(), part.end(), record_.begin() + sizeof(header));
    if (!WriteMessage(status_, write_ptr_, 0, std::span(record_).first(uint64_t{count} * kQueueElementSize))) {
      return errors_.back();
    }
    write_ptr_ = (write_ptr_ + count) % status_.count;
    ++tx_sequence_;
    // The elements before the pointer that publishes them (msgqTxSubmitBuffers).
    if (!WriteShared32(status_.offset + kWritePtrOffset, write_ptr_, "the status queue's writePtr")) {
      return errors_.back();
    }
  }
  return absl::OkStatus();
}

}  // namespace nv::sim
