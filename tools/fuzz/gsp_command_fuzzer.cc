// libFuzzer target for the virtual GSP's command parse (nv/sim/gsp_message_queue.h): every input is
// MESSAGE_QUEUE_INIT_ARGUMENTS' first four members and a shared region (page table, command queue, status queue) as
// a driver might have left it, mapped at kBusBase; the model starts, reads every command it can and answers each,
// then posts an event. Driver mistakes must become recorded errors: AddressSanitizer catches any access outside the
// mapped pages; a hang is a finding. Built and run by `tools/fuzz.sh gsp_command`.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "nv/regs/rpc_constants.h"
#include "nv/sim/gsp_message_queue.h"
#include "tests/nv/sim/host_device_memory.h"
#include "tools/fuzz/gsp_queue_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nv::gsp::MESSAGE_QUEUE_INIT_ARGUMENTS arguments{};
  if (size < gsp_fuzz::kArgumentsSize) return 0;
  std::memcpy(&arguments, data, gsp_fuzz::kArgumentsSize);
  data += gsp_fuzz::kArgumentsSize;
  size -= gsp_fuzz::kArgumentsSize;

  std::vector<uint64_t> words(uint64_t{gsp_fuzz::kRegionPages} * 0x1000 / 8);
  uint8_t* region = reinterpret_cast<uint8_t*>(words.data());
  std::memcpy(region, data, std::min<size_t>(size, words.size() * 8));
  nv::sim::testing::HostDeviceMemory memory;
  for (uint32_t i = 0; i < gsp_fuzz::kRegionPages; ++i)
    memory.MapPage(gsp_fuzz::kBusBase + i * 0x1000, region + i * 0x1000);

  nv::sim::GspMessageQueue gsp(memory);
  if (!gsp.Start(arguments)) return 0;
  for (int i = 0; i < 64; ++i) {
    std::optional<nv::sim::GspCommand> command = gsp.ReadCommand();
    if (!command) break;
    (void)gsp.WriteReply(*command, 0, std::span(command->payload).first(std::min<size_t>(command->payload.size(), 64)));
  }
  (void)gsp.WriteEvent(nv::regs::rpc::NV_VGPU_MSG_EVENT_GSP_INIT_DONE, std::vector<uint8_t>(16));
  return 0;
}
