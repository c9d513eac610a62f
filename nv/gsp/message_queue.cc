#include "nv/gsp/message_queue.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "nv/regs/names.h"
#include "nv/regs/rpc_constants.h"
#include "nv/regs/status_constants.h"

namespace nv::gsp {
namespace {

using regs::rpc::NV_VGPU_MSG_FUNCTION_CONTINUATION_RECORD;

constexpr uint64_t kWritePtrOffset = offsetof(msgqTxHeader, writePtr);

// "NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL (0x4c)"; numbers GSP-RM 535 does not define print as a number alone.
std::string RpcLabel(uint32_t function) {
  absl::string_view name = regs::RpcName(function);
  return name.empty() ? absl::StrFormat("RPC %#x", function) : absl::StrFormat("%s (%#x)", name, function);
}

std::string StatusLabel(uint32_t status) {
  absl::string_view name = regs::StatusName(status);
  return name.empty() ? absl::StrFormat("%#x", status) : absl::StrFormat("%#x %s", status, name);
}

}  // namespace

absl::StatusOr<SharedRegionLayout> LayoutSharedRegion(uint32_t queue_size) {
  // msgq keeps one element free (msgqTxCreate: txFree = msgCount - 1), so the largest message needs
  // kMaxElementsPerMessage + 1 elements after the header page (RM raises a smaller status queue to
  // GSP_MSG_QUEUE_ELEMENT_SIZE_MAX for the same reason).
  constexpr uint64_t kMinQueueSize = kQueueHeaderSize + uint64_t{kMaxElementsPerMessage + 1} * kQueueElementSize;
  if (queue_size % kSharedPageSize != 0 || queue_size < kMinQueueSize) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GSP message queue size %#x: must be a multiple of %#x and at least %#x (a header page and %u elements)",
        queue_size, kSharedPageSize, kMinQueueSize, kMaxElementsPerMessage + 1));
  }
  SharedRegionLayout layout;
  layout.queue_size = queue_size;
  // r535_gsp_shared_init: the queues' pages, plus the pages holding their 8-byte entries.
  uint64_t entries = 2 * uint64_t{queue_size} / kSharedPageSize;
  entries += (entries * sizeof(uint64_t) + kSharedPageSize - 1) / kSharedPageSize;
  layout.page_table_entries = static_cast<uint32_t>(entries);
  const uint64_t page_table_size =
      (entries * sizeof(uint64_t) + kSharedPageSize - 1) / kSharedPageSize * kSharedPageSize;
  layout.command_queue_offset = page_table_size;
  layout.status_queue_offset = page_table_size + queue_size;
  layout.size = page_table_size + 2 * uint64_t{queue_size};
  return layout;
}

MessageQueue::MessageQueue(std::span<uint8_t> memory, const SharedRegionLayout& layout, Doorbell doorbell)
    : memory_(memory), layout_(layout), doorbell_(std::move(doorbell)) {}

absl::StatusOr<std::unique_ptr<MessageQueue>> MessageQueue::Create(std::span<uint8_t> memory,
                                                                   std::span<const uint64_t> page_bus_addresses,
                                                                   Doorbell doorbell, uint32_t queue_size) {
  BAREGPU_ASSIGN_OR_RETURN(SharedRegionLayout layout, LayoutSharedRegion(queue_size));
  if (memory.size() != layout.size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GSP message queues: %#x bytes of shared memory given, the layout for %#x-byte queues takes %#x", memory.size(),
        queue_size, layout.size));
  }
  if (reinterpret_cast<uintptr_t>(memory.data()) % alignof(uint64_t) != 0) {
    return absl::InvalidArgumentError("GSP message queues: the shared memory is not 8-byte aligned");
  }
  if (page_bus_addresses.size() != layout.page_table_entries) {
    return absl::InvalidArgumentError(
        absl::StrFormat("GSP message queues: %u page addresses given, the region has %u pages",
                        page_bus_addresses.size(), layout.page_table_entries));
  }
  for (size_t i = 0; i < page_bus_addresses.size(); ++i) {
    if (page_bus_addresses[i] % kSharedPageSize != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "GSP message queues: page %u's bus address %#x is not 4 KiB aligned (the GSP's page table lists 4 KiB pages)",
          i, page_bus_addresses[i]));
    }
  }
  if (!doorbell) return absl::InvalidArgumentError("GSP message queues: no doorbell");

  auto queue = std::unique_ptr<MessageQueue>(new MessageQueue(memory, layout, std::move(doorbell)));
  std::memset(memory.data(), 0, memory.size());
  std::memcpy(memory.data(), page_bus_addresses.data(), page_bus_addresses.size_bytes());

  // The command queue's header as msgqTxCreate writes it (r535_gsp_shared_init writes the same values).
  msgqTxHeader tx{};
  tx.version = regs::gsp::MSGQ_VERSION;
  tx.size = queue_size;
  tx.msgSize = kQueueElementSize;
  tx.msgCount = (queue_size - kQueueHeaderSize) / kQueueElementSize;
  tx.writePtr = 0;
  tx.flags = regs::gsp::MSGQ_FLAGS_SWAP_RX;
  tx.rxHdrOff = kRxHeaderOffset;
  tx.entryOff = kQueueHeaderSize;
  std::memcpy(memory.data() + layout.command_queue_offset, &tx, sizeof(tx));
  queue->command_count_ = tx.msgCount;
  // Until GSP-RM's status-queue header says otherwise, its read pointer sits where msgqTxCreate puts an rx header.
  queue->gsp_read_ptr_offset_ = layout.status_queue_offset + kRxHeaderOffset;

  queue->init_arguments_.sharedMemPhysAddr = page_bus_addresses[0];
  queue->init_arguments_.pageTableEntryCount = layout.page_table_entries;
  queue->init_arguments_.cmdQueueOffset = layout.command_queue_offset;
  queue->init_arguments_.statQueueOffset = layout.status_queue_offset;
  // Everything above must be visible before the GSP is told where the region is.
  std::atomic_thread_fence(std::memory_order_release);
  return queue;
}

uint32_t MessageQueue::LoadShared32(uint64_t offset) const {
  return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(memory_.data() + offset))
      .load(std::memory_order_acquire);
}

void MessageQueue::StoreShared32(uint64_t offset, uint32_t value) {
  std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(memory_.data() + offset))
      .store(value, std::memory_order_release);
}

void MessageQueue::WriteCommandBytes(uint32_t first, uint64_t offset, std::span<const uint8_t> bytes) {
  const uint64_t entries = layout_.command_queue_offset + kQueueHeaderSize;
  while (!bytes.empty()) {
    const uint32_t element = static_cast<uint32_t>((first + offset / kQueueElementSize) % command_count_);
    const uint64_t within = offset % kQueueElementSize;
    const size_t n = std::min<uint64_t>(bytes.size(), kQueueElementSize - within);
    std::memcpy(memory_.data() + entries + uint64_t{element} * kQueueElementSize + within, bytes.data(), n);
    bytes = bytes.subspan(n);
    offset += n;
  }
}

void MessageQueue::ZeroCommandBytes(uint32_t first, uint64_t offset, uint64_t size) {
  const uint64_t entries = layout_.command_queue_offset + kQueueHeaderSize;
  while (size != 0) {
    const uint32_t element = static_cast<uint32_t>((first + offset / kQueueElementSize) % command_count_);
    const uint64_t within = offset % kQueueElementSize;
    const uint64_t n = std::min<uint64_t>(size, kQueueElementSize - within);
    std::memset(memory_.data() + entries + uint64_t{element} * kQueueElementSize + within, 0, n);
    size -= n;
    offset += n;
  }
}

template <typename Visit>
void MessageQueue::ForEachStatusChunk(uint32_t first, uint64_t offset, uint64_t size, Visit visit) const {
  while (size != 0) {
    const uint32_t element = static_cast<uint32_t>((first + offset / kQueueElementSize) % status_count_);
    const uint64_t within = offset % kQueueElementSize;
    const uint64_t n = std::min<uint64_t>(size, kQueueElementSize - within);
    visit(
        std::span<const uint8_t>(memory_.data() + status_entries_ + uint64_t{element} * kQueueElementSize + within, n));
    size -= n;
    offset += n;
  }
}

void MessageQueue::ReadStatusBytes(uint32_t first, uint64_t offset, std::span<uint8_t> out) const {
  size_t done = 0;
  ForEachStatusChunk(first, offset, out.size(), [&](std::span<const uint8_t> chunk) {
    std::memcpy(out.data() + done, chunk.data(), chunk.size());
    done += chunk.size();
  });
}

absl::Status MessageQueue::SendRpc(uint32_t function, std::span<const uint8_t> payload, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  // nouveau r535_gsp_rpc_push: the first max_rpc_size bytes under the RPC's own function, the rest in
  // CONTINUATION_RECORDs of up to the same size.
  const size_t first = std::min<size_t>(payload.size(), kMaxRecordPayload);
  BAREGPU_RETURN_IF_ERROR(SendRecord(function, payload.first(first), deadline));
  for (size_t offset = first; offset < payload.size(); offset += kMaxRecordPayload) {
    const size_t n = std::min<size_t>(payload.size() - offset, kMaxRecordPayload);
    absl::Status sent = SendRecord(NV_VGPU_MSG_FUNCTION_CONTINUATION_RECORD, payload.subspan(offset, n), deadline);
    if (!sent.ok()) {
      return absl::Status(sent.code(), absl::StrFormat("%s (continuation of %s at parameter byte %u of %u)",
                                                       sent.message(), RpcLabel(function), offset, payload.size()));
    }
  }
  if (tracer_) tracer_({.sent = true, .function = function, .payload_bytes = payload.size()});
  return absl::OkStatus();
}

absl::Status MessageQueue::SendRecord(uint32_t function, std::span<const uint8_t> payload, absl::Time deadline) {
  const uint32_t rpc_length = kRpcHeaderSize + static_cast<uint32_t>(payload.size());
  const uint32_t elements = ElementsForRpcLength(rpc_length);

  // Room: msgqTxGetFreeSpace, one element always kept free so that equal pointers mean empty.
  for (;;) {
    const uint32_t gsp_read = LoadShared32(gsp_read_ptr_offset_);
    if (gsp_read >= command_count_) {
      return absl::DataLossError(
          absl::StrFormat("GSP command queue: GSP-RM's readPtr %u (shared-region offset %#x) is not below msgCount %u",
                          gsp_read, gsp_read_ptr_offset_, command_count_));
    }
    const uint32_t free = (gsp_read + command_count_ - write_ptr_ - 1) % command_count_;
    if (free >= elements) break;
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "GSP command queue full: %s needs %u elements, %u free (GSP-RM's readPtr %u, writePtr %u, msgCount %u)",
          RpcLabel(function), elements, free, gsp_read, write_ptr_, command_count_));
    }
    std::this_thread::yield();
  }

  // The element and RPC headers as nouveau (r535_gsp_rpc_get, r535_gsp_cmdq_push) and RM fill them; rpc.sequence
  // stays 0 as nouveau leaves it.
  GSP_MSG_QUEUE_ELEMENT header{};
  header.seqNum = tx_sequence_;
  header.elemCount = elements;
  header.rpc.header_version = kRpcHeaderVersion;
  header.rpc.signature = regs::gsp::NV_VGPU_MSG_SIGNATURE_VALID;
  header.rpc.length = rpc_length;
  header.rpc.function = function;
  header.rpc.rpc_result = kRpcResultPending;
  header.rpc.rpc_result_private = kRpcResultPending;
  ElementChecksum checksum;
  checksum.Add(std::span(reinterpret_cast<const uint8_t*>(&header), sizeof(header)));
  checksum.Add(payload);
  header.checkSum = checksum.Fold();

  const uint32_t first = write_ptr_;
  WriteCommandBytes(first, 0, std::span(reinterpret_cast<const uint8_t*>(&header), sizeof(header)));
  WriteCommandBytes(first, sizeof(header), payload);
  // The rest of the last element is zero: the checksum's padding, and no stale bytes for the GSP to see.
  const uint64_t used = sizeof(header) + payload.size();
  ZeroCommandBytes(first, used, uint64_t{elements} * kQueueElementSize - used);

  write_ptr_ = (write_ptr_ + elements) % command_count_;
  StoreShared32(layout_.command_queue_offset + kWritePtrOffset, write_ptr_);  // release: the elements first
  ++tx_sequence_;
  doorbell_();
  return absl::OkStatus();
}

absl::StatusOr<bool> MessageQueue::LinkStatusQueue() {
  const uint64_t base = layout_.status_queue_offset;
  msgqTxHeader rx;
  rx.version = LoadShared32(base + offsetof(msgqTxHeader, version));
  rx.size = LoadShared32(base + offsetof(msgqTxHeader, size));
  rx.msgSize = LoadShared32(base + offsetof(msgqTxHeader, msgSize));
  rx.msgCount = LoadShared32(base + offsetof(msgqTxHeader, msgCount));
  rx.flags = LoadShared32(base + offsetof(msgqTxHeader, flags));
  rx.rxHdrOff = LoadShared32(base + offsetof(msgqTxHeader, rxHdrOff));
  rx.entryOff = LoadShared32(base + offsetof(msgqTxHeader, entryOff));
  // Not yet created: tinygrad (NVRpcQueue) waits for entryOff to be set (the virtual GSP writes it last); RM
  // retries msgqRxLink until it succeeds. A header with entryOff set must be whole.
  if (rx.entryOff == 0) return false;

  auto bad = [&](absl::string_view why) {
    return absl::DataLossError(absl::StrFormat(
        "GSP status queue header (shared-region offset %#x): %s (version %u, size %#x, msgSize %#x, msgCount %u, "
        "flags %#x, rxHdrOff %#x, entryOff %#x)",
        base, why, rx.version, rx.size, rx.msgSize, rx.msgCount, rx.flags, rx.rxHdrOff, rx.entryOff));
  };
  // msgqRxLink's checks, with the sizes RM passes it (statusQueueSize, GSP_MSG_QUEUE_ELEMENT_SIZE_MIN).
  if (rx.version != regs::gsp::MSGQ_VERSION) return bad("version is not MSGQ_VERSION");
  if (rx.size != layout_.queue_size)
    return bad(absl::StrFormat("size is not the %#x bytes allocated", layout_.queue_size));
  if (rx.msgSize != kQueueElementSize) return bad("msgSize is not GSP_MSG_QUEUE_ELEMENT_SIZE_MIN");
  if (rx.rxHdrOff < sizeof(msgqTxHeader) || rx.rxHdrOff % alignof(uint32_t) != 0) {
    return bad("rxHdrOff overlaps the msgqTxHeader or is misaligned");
  }
  if (rx.entryOff < kRxHeaderOffset + sizeof(msgqRxHeader) || rx.rxHdrOff + sizeof(msgqRxHeader) > rx.entryOff) {
    return bad("the rx header and the entries overlap");
  }
  // Elements are whole pages (GSP_MSG_QUEUE_ELEMENT_ALIGN); msgq itself would take any entryOff.
  if (rx.entryOff % kQueueElementSize != 0) return bad("entryOff is not element-aligned");
  if (uint64_t{rx.entryOff} + rx.msgSize > rx.size) return bad("no room for one element");
  if (rx.msgCount != (rx.size - rx.entryOff) / rx.msgSize) return bad("msgCount does not match size and entryOff");
  if ((rx.flags & regs::gsp::MSGQ_FLAGS_SWAP_RX) == 0) {
    return bad("MSGQ_FLAGS_SWAP_RX is clear (nouveau and RM swap the rx headers; the pointers would be elsewhere)");
  }
  if (rx.msgCount <= kMaxElementsPerMessage) return bad("too few elements for the largest message");

  status_count_ = rx.msgCount;
  status_entries_ = base + rx.entryOff;
  gsp_read_ptr_offset_ = base + rx.rxHdrOff;
  status_linked_ = true;
  return true;
}

absl::StatusOr<std::optional<GspMessage>> MessageQueue::Poll() {
  if (!status_linked_) {
    BAREGPU_ASSIGN_OR_RETURN(bool linked, LinkStatusQueue());
    if (!linked) return std::nullopt;
  }
  const uint32_t gsp_write = LoadShared32(layout_.status_queue_offset + kWritePtrOffset);  // acquire: elements next
  if (gsp_write >= status_count_) {
    return absl::DataLossError(
        absl::StrFormat("GSP status queue: GSP-RM's writePtr %u is not below msgCount %u", gsp_write, status_count_));
  }
  const uint32_t available = (gsp_write + status_count_ - read_ptr_) % status_count_;
  if (available == 0) return std::nullopt;

  const uint32_t first = read_ptr_;
  GSP_MSG_QUEUE_ELEMENT header;
  ReadStatusBytes(first, 0, std::span(reinterpret_cast<uint8_t*>(&header), sizeof(header)));
  auto bad = [&](absl::string_view why) {
    return absl::DataLossError(absl::StrFormat("GSP status queue element %u (shared-region offset %#x, message %u): %s",
                                               first, status_entries_ + uint64_t{first} * kQueueElementSize,
                                               rx_sequence_, why));
  };
  if (header.elemCount == 0 || header.elemCount > kMaxElementsPerMessage) {
    return bad(absl::StrFormat("elemCount %u is not 1..%u", header.elemCount, kMaxElementsPerMessage));
  }
  if (header.elemCount > available) {
    return bad(absl::StrFormat("elemCount %u but only %u elements published (writePtr %u)", header.elemCount, available,
                               gsp_write));
  }
  const uint64_t message_size = uint64_t{kElementHeaderSize} + header.rpc.length;
  if (message_size < kMinMessageSize || message_size > uint64_t{header.elemCount} * kQueueElementSize) {
    return bad(absl::StrFormat("rpc length %u does not fit %u element(s) (at least %u bytes, at most %u)",
                               header.rpc.length, header.elemCount, kMinMessageSize - kElementHeaderSize,
                               header.elemCount * kQueueElementSize - kElementHeaderSize));
  }
  ElementChecksum checksum;
  ForEachStatusChunk(first, 0, ChecksummedBytes(header.rpc.length),
                     [&](std::span<const uint8_t> chunk) { checksum.Add(chunk); });
  if (checksum.Fold() != 0) {
    return bad(absl::StrFormat("checksum mismatch: the 64-bit XOR of its %u bytes folds to %#x, not 0 (checkSum %#x)",
                               ChecksummedBytes(header.rpc.length), checksum.Fold(), header.checkSum));
  }
  if (header.seqNum != rx_sequence_) {
    return bad(absl::StrFormat("seqNum %u, expected %u", header.seqNum, rx_sequence_));
  }
  if (header.rpc.header_version != kRpcHeaderVersion) {
    return bad(absl::StrFormat("header_version %#x, expected %#x", header.rpc.header_version, kRpcHeaderVersion));
  }
  if (header.rpc.signature != regs::gsp::NV_VGPU_MSG_SIGNATURE_VALID) {
    return bad(absl::StrFormat("signature %#x, expected NV_VGPU_MSG_SIGNATURE_VALID %#x", header.rpc.signature,
                               regs::gsp::NV_VGPU_MSG_SIGNATURE_VALID));
  }

  GspMessage message;
  message.function = header.rpc.function;
  message.rpc_result = header.rpc.rpc_result;
  message.rpc_result_private = header.rpc.rpc_result_private;
  message.sequence = header.rpc.sequence;
  message.element_index = first;
  message.payload.resize(header.rpc.length - kRpcHeaderSize);
  ReadStatusBytes(first, sizeof(header), message.payload);

  read_ptr_ = (read_ptr_ + header.elemCount) % status_count_;
  StoreShared32(layout_.command_queue_offset + kRxHeaderOffset, read_ptr_);  // release: done reading them
  ++rx_sequence_;
  if (tracer_) {
    tracer_({.function = message.function, .rpc_result = message.rpc_result, .payload_bytes = message.payload.size()});
  }
  return message;
}

absl::StatusOr<GspMessage> MessageQueue::WaitFor(uint32_t function, absl::Duration timeout, size_t reply_payload_size) {
  return Wait(function, timeout, reply_payload_size, /*fail_on_rpc_result=*/true);
}

absl::StatusOr<GspMessage> MessageQueue::WaitForReply(uint32_t function, absl::Duration timeout,
                                                      size_t reply_payload_size) {
  return Wait(function, timeout, reply_payload_size, /*fail_on_rpc_result=*/false);
}

absl::StatusOr<GspMessage> MessageQueue::Wait(uint32_t function, absl::Duration timeout, size_t reply_payload_size,
                                              bool fail_on_rpc_result) {
  const absl::Time deadline = absl::Now() + timeout;
  std::optional<GspMessage> reply;
  for (;;) {
    BAREGPU_ASSIGN_OR_RETURN(std::optional<GspMessage> message, Poll());
    if (!message) {
      if (absl::Now() >= deadline) {
        return absl::DeadlineExceededError(absl::StrFormat(
            "GSP-RM did not answer %s within %s%s", RpcLabel(function), absl::FormatDuration(timeout),
            reply ? absl::StrFormat(" (%u of %u reply bytes arrived)", reply->payload.size(), reply_payload_size)
                  : std::string()));
      }
      std::this_thread::yield();
      continue;
    }
    if (reply) {
      // Reassembling: only continuation records may follow until the reply is whole.
      if (message->function != NV_VGPU_MSG_FUNCTION_CONTINUATION_RECORD) {
        return absl::DataLossError(absl::StrFormat(
            "GSP status queue element %u: %s while %s's reply had %u of %u bytes (expected a continuation record)",
            message->element_index, RpcLabel(message->function), RpcLabel(function), reply->payload.size(),
            reply_payload_size));
      }
      if (reply->payload.size() + message->payload.size() > reply_payload_size) {
        return absl::DataLossError(absl::StrFormat(
            "GSP status queue element %u: a continuation record of %u bytes overruns %s's %u-byte reply (%u so far)",
            message->element_index, message->payload.size(), RpcLabel(function), reply_payload_size,
            reply->payload.size()));
      }
      reply->payload.insert(reply->payload.end(), message->payload.begin(), message->payload.end());
    } else if (message->function == function) {
      if (fail_on_rpc_result && message->rpc_result != regs::status::NV_OK) {
        return absl::FailedPreconditionError(absl::StrFormat("GSP-RM failed %s: rpc_result %s, rpc_result_private %#x",
                                                             RpcLabel(function), StatusLabel(message->rpc_result),
                                                             message->rpc_result_private));
      }
      reply = std::move(message);
      if (reply->payload.size() < reply_payload_size) {
        reply->payload.reserve(reply_payload_size);
        continue;
      }
    } else if (message->function == NV_VGPU_MSG_FUNCTION_CONTINUATION_RECORD) {
      return absl::DataLossError(absl::StrFormat(
          "GSP status queue element %u: a continuation record with no reply to continue (waiting for %s)",
          message->element_index, RpcLabel(function)));
    } else {
      if (event_handler_) event_handler_(*message);
      continue;
    }
    if (reply->payload.size() >= reply_payload_size) return std::move(*reply);
  }
}

}  // namespace nv::gsp
