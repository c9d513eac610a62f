// The framing of one message in a GSP-RM message queue, as both ends of the queues (the driver, nv/gsp/message_queue,
// and the virtual GSP, nv/sim/gsp_message_queue) lay it out: a GSP_MSG_QUEUE_ELEMENT header, the RPC header
// (rpc_message_header_v) and the RPC's parameters, spread over one or more whole queue elements.
//
// Sources (paths under shared/vendor/nvidia/open-gpu-kernel-modules-535.113.01/src/ unless they say otherwise):
// nvidia/inc/kernel/gpu/gsp/message_queue_priv.h (element sizes and alignments), common/shared/msgq/msgq.c (queue
// headers and pointers), open-gpu-kernel-modules-580.142's message_queue_priv.h (_checkSum32, which 535's copy of the
// header lacks), nvidia/kernel/inc/vgpu/rpc_headers.h (RPC header version and result), Linux 6.12 nouveau
// nvkm/subdev/gsp/r535.c (r535_gsp_shared_init, r535_gsp_cmdq_push, r535_gsp_rpc_push). Where these say nothing
// of what a receiver checks, RM's own CPU side says it: src/nvidia/src/kernel/gpu/gsp/message_queue_cpu.c
// (GspMsgQueueSendCommand, GspMsgQueueReceiveStatus, _getMsgQueueParams) of NVIDIA's open-gpu-kernel-modules, read
// from the public repository (the vendored subset has only headers).
#ifndef BAREGPU_NV_GSP_QUEUE_ELEMENT_H_
#define BAREGPU_NV_GSP_QUEUE_ELEMENT_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "nv/gsp/layouts.h"
#include "nv/regs/gsp_constants.h"

namespace nv::gsp {

// GSP_MSG_QUEUE_ELEMENT_SIZE_MIN (RM_PAGE_SIZE): every queue entry is one 4 KiB page; msgqTxHeader.msgSize.
inline constexpr uint32_t kQueueElementSize = 0x1000;
// GSP_MSG_QUEUE_ELEMENT_SIZE_MAX / GSP_MSG_QUEUE_ELEMENT_SIZE_MIN: a message spans at most 16 elements (RM's staging
// buffer is GSP_MSG_QUEUE_ELEMENT_SIZE_MAX bytes; nouveau's GSP_MSG_MAX_SIZE).
inline constexpr uint32_t kMaxElementsPerMessage = 16;
inline constexpr uint32_t kMaxMessageSize = kQueueElementSize * kMaxElementsPerMessage;
// GSP_MSG_QUEUE_ELEMENT_HDR_SIZE: the bytes before the RPC header (auth tag, AAD, checkSum, seqNum, elemCount, pad).
inline constexpr uint32_t kElementHeaderSize = offsetof(GSP_MSG_QUEUE_ELEMENT, rpc);
inline constexpr uint32_t kRpcHeaderSize = sizeof(rpc_message_header_v);
// The smallest message RM accepts: a whole GSP_MSG_QUEUE_ELEMENT, i.e. an RPC header with no parameters
// (GspMsgQueueSendCommand / GspMsgQueueReceiveStatus: msgLen < sizeof(GSP_MSG_QUEUE_ELEMENT) is an error).
inline constexpr uint32_t kMinMessageSize = sizeof(GSP_MSG_QUEUE_ELEMENT);
// The most parameter bytes one record carries: nouveau r535_gsp_rpc_push's max_rpc_size (16 pages less the element
// and RPC headers); larger RPCs continue in NV_VGPU_MSG_FUNCTION_CONTINUATION_RECORD records.
inline constexpr uint32_t kMaxRecordPayload = kMaxMessageSize - kElementHeaderSize - kRpcHeaderSize;

// GSP_MSG_QUEUE_HEADER_SIZE (RM_PAGE_SIZE): a queue's first page holds its msgqTxHeader and the other queue's
// msgqRxHeader; the entries start after it (msgqTxHeader.entryOff).
inline constexpr uint32_t kQueueHeaderSize = 0x1000;
// msgqTxCreate puts the msgqRxHeader at NV_ALIGN_UP(sizeof(msgqTxHeader), 1 << hdrAlign), hdrAlign being
// GSP_MSG_QUEUE_HEADER_ALIGN (4): 32. nouveau (r535_gsp_shared_init) and tinygrad (init_rm_args) write the same.
inline constexpr uint32_t kGspMsgQueueHeaderAlign = 4;
inline constexpr uint32_t kRxHeaderOffset =
    (sizeof(msgqTxHeader) + (1u << kGspMsgQueueHeaderAlign) - 1) & ~((1u << kGspMsgQueueHeaderAlign) - 1);
static_assert(kRxHeaderOffset == 32);
// The size of each queue nouveau (r535_gsp_shared_init) and RM (_getMsgQueueParams, defaultCommandQueueSize and
// defaultStatusQueueSize on silicon) give both queues: 256 KiB, 63 elements after the header page.
inline constexpr uint32_t kDefaultQueueSize = 0x40000;
// A shared-region page (the page table lists 4 KiB pages: GSP_PAGE_SIZE in nouveau, RM_PAGE_SIZE in RM).
inline constexpr uint32_t kSharedPageSize = 0x1000;

// rpc_message_header_v.header_version: NV_VGPU_MSG_HEADER_VERSION_MAJOR_TOT in bits 31:24 and _MINOR_TOT in 23:16
// (rpc_headers.h); nouveau writes 0x03000000.
inline constexpr uint32_t kRpcHeaderVersion =
    regs::gsp::NV_VGPU_MSG_HEADER_VERSION_MAJOR.Place(regs::gsp::NV_VGPU_MSG_HEADER_VERSION_MAJOR_TOT) |
    regs::gsp::NV_VGPU_MSG_HEADER_VERSION_MINOR.Place(regs::gsp::NV_VGPU_MSG_HEADER_VERSION_MINOR_TOT);
static_assert(kRpcHeaderVersion == 0x03000000);
// NV_VGPU_MSG_RESULT_RPC_PENDING (rpc_headers.h; not among nv/regs' generated constants): what the host writes in
// rpc_result and rpc_result_private of a command (nouveau r535_gsp_rpc_get, tinygrad _send_rpc_record).
inline constexpr uint32_t kRpcResultPending = 0xffffffff;

// Queue elements a message of `rpc_length` bytes (rpc_message_header_v.length: RPC header and parameters) takes:
// GSP_MSG_QUEUE_BYTES_TO_ELEMENTS(GSP_MSG_QUEUE_ELEMENT_HDR_SIZE + length).
constexpr uint32_t ElementsForRpcLength(uint32_t rpc_length) {
  return static_cast<uint32_t>((uint64_t{kElementHeaderSize} + rpc_length + kQueueElementSize - 1) / kQueueElementSize);
}

// The bytes the checksum covers for an RPC of `rpc_length`: the element header, the RPC, zero-padded to 8 bytes
// (_checkSum32 reads whole 64-bit words: "it is OK to read past the end to the 8-byte alignment").
constexpr uint64_t ChecksummedBytes(uint32_t rpc_length) {
  return (uint64_t{kElementHeaderSize} + rpc_length + 7) & ~uint64_t{7};
}

// The element checksum, fed in pieces: the XOR of the message's little-endian 64-bit words, folded to 32 bits (high
// half XOR low half). A sender sets checkSum to the fold taken with checkSum zero; a receiver's fold over the whole
// message, checkSum included, is then zero (checkSum is the low half of the word at byte 32, so it cancels).
// Bytes are placed by their position in the message, so pieces may have any length.
class ElementChecksum {
 public:
  void Add(std::span<const uint8_t> bytes);
  // The fold so far; the bytes not yet given up to the next 8-byte boundary count as zero.
  uint32_t Fold() const { return static_cast<uint32_t>(sum_ >> 32) ^ static_cast<uint32_t>(sum_); }
  uint64_t position() const { return position_; }

 private:
  uint64_t sum_ = 0;
  uint64_t position_ = 0;
};

}  // namespace nv::gsp

#endif  // BAREGPU_NV_GSP_QUEUE_ELEMENT_H_
