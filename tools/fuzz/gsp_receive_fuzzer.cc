// libFuzzer target for the driver's receive path of GSP-RM's message queues (nv/gsp/message_queue.h): every input is
// a status queue as GSP-RM might have left it (header page and elements) behind a well-formed command queue; the
// driver waits for a reply of the size the input's first 4 bytes say (continuation records appended), polls
// everything else and sends one RPC (reading GSP-RM's read pointer). AddressSanitizer catches any read or write the
// queue code let outside the region; a hang is a finding. Built and run by `tools/fuzz.sh gsp_receive`.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "nv/gsp/message_queue.h"
#include "nv/regs/rpc_constants.h"
#include "tools/fuzz/gsp_queue_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nv::gsp::SharedRegionLayout layout = *nv::gsp::LayoutSharedRegion(gsp_fuzz::kQueueSize);
  std::vector<uint64_t> words(layout.size / 8);
  const std::span<uint8_t> region(reinterpret_cast<uint8_t*>(words.data()), layout.size);
  std::vector<uint64_t> bus(layout.page_table_entries);
  for (size_t i = 0; i < bus.size(); ++i) bus[i] = gsp_fuzz::kBusBase + i * 0x1000;
  absl::StatusOr<std::unique_ptr<nv::gsp::MessageQueue>> queue = nv::gsp::MessageQueue::Create(
      region, bus, [] {}, gsp_fuzz::kQueueSize);
  if (!queue.ok()) __builtin_trap();

  uint32_t reply_size = 0;
  if (size >= gsp_fuzz::kReplySizeSize) {
    std::memcpy(&reply_size, data, gsp_fuzz::kReplySizeSize);
    data += gsp_fuzz::kReplySizeSize;
    size -= gsp_fuzz::kReplySizeSize;
  }
  std::memcpy(region.data() + layout.status_queue_offset, data, std::min<size_t>(size, layout.queue_size));

  (void)(*queue)->WaitFor(nv::regs::rpc::NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL, absl::ZeroDuration(),
                          reply_size % (1u << 20));
  for (int i = 0; i < 64; ++i) {
    absl::StatusOr<std::optional<nv::gsp::GspMessage>> message = (*queue)->Poll();
    if (!message.ok() || !message->has_value()) break;
  }
  (void)(*queue)->SendRpc(nv::regs::rpc::NV_VGPU_MSG_FUNCTION_NOP, std::vector<uint8_t>(8), absl::ZeroDuration());
  return 0;
}
