// Seeds for the GSP message-queue fuzzers: `gsp_queue_seedgen receive DIR` writes status queues the virtual GSP
// (nv/sim/gsp_message_queue.h) wrote for the driver (an event; an event and a reply; a reply in two records);
// `gsp_queue_seedgen command DIR` writes shared regions into which the driver (nv/gsp/message_queue.h) sent commands
// (two small RPCs; an RPC in two records; an allocation and a free). Run by `tools/fuzz.sh gsp_receive|gsp_command
// seeds`; the shapes are gsp_queue_fuzz.h's.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "nv/gsp/message_queue.h"
#include "nv/regs/rpc_constants.h"
#include "nv/sim/gsp_message_queue.h"
#include "tests/nv/sim/host_device_memory.h"
#include "tools/fuzz/gsp_queue_fuzz.h"

namespace {

using namespace nv::regs::rpc;  // NOLINT

struct Setup {
  Setup() : layout(*nv::gsp::LayoutSharedRegion(gsp_fuzz::kQueueSize)), words(layout.size / 8) {
    std::vector<uint64_t> bus(layout.page_table_entries);
    for (size_t i = 0; i < bus.size(); ++i) {
      bus[i] = gsp_fuzz::kBusBase + i * 0x1000;
      memory.MapPage(bus[i], bytes() + i * 0x1000);
    }
    driver = std::move(*nv::gsp::MessageQueue::Create(
        std::span(bytes(), layout.size), bus, [] {}, gsp_fuzz::kQueueSize));
  }
  uint8_t* bytes() { return reinterpret_cast<uint8_t*>(words.data()); }

  nv::gsp::SharedRegionLayout layout;
  std::vector<uint64_t> words;
  nv::sim::testing::HostDeviceMemory memory;
  std::unique_ptr<nv::gsp::MessageQueue> driver;
  nv::sim::GspMessageQueue gsp{memory};
};

std::vector<uint8_t> Control(uint32_t size) {
  std::vector<uint8_t> payload(size, 0x5a);
  nv::gsp::rpc_gsp_rm_control_v03_00 control{};
  control.cmd = 0x2080014a;
  control.paramsSize = size - sizeof(control);
  std::memcpy(payload.data(), &control, sizeof(control));
  return payload;
}

void Write(const std::string& path, const void* prefix, size_t prefix_size, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(prefix), prefix_size);
  out.write(reinterpret_cast<const char*>(data), size);
}

void Receive(const std::string& dir) {
  const uint32_t sizes[] = {0, 0, 66456};
  for (int seed = 0; seed < 3; ++seed) {
    Setup s;
    if (!s.gsp.Start(s.driver->init_arguments())) std::abort();
    if (seed == 0) (void)s.gsp.WriteEvent(NV_VGPU_MSG_EVENT_GSP_INIT_DONE, std::vector<uint8_t>(64, 1));
    if (seed >= 1) {
      (void)s.driver->SendRpc(NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL, Control(24 + 8), absl::ZeroDuration());
      std::optional<nv::sim::GspCommand> command = s.gsp.ReadCommand();
      if (!command) std::abort();
      if (seed == 1) (void)s.gsp.WriteEvent(NV_VGPU_MSG_EVENT_GSP_RUN_CPU_SEQUENCER, std::vector<uint8_t>(52, 3));
      (void)s.gsp.WriteReply(*command, 0, Control(seed == 1 ? 100 : sizes[seed]));
    }
    Write(dir + "/receive_" + std::to_string(seed), &sizes[seed], gsp_fuzz::kReplySizeSize,
          s.bytes() + s.layout.status_queue_offset, s.layout.queue_size);
  }
}

void Command(const std::string& dir) {
  for (int seed = 0; seed < 3; ++seed) {
    Setup s;
    if (seed == 0) {
      (void)s.driver->SendRpc(NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO, std::vector<uint8_t>(664, 7),
                              absl::ZeroDuration());
      nv::gsp::PACKED_REGISTRY_TABLE table{sizeof(table) + 4, 0};
      std::vector<uint8_t> registry(sizeof(table) + 4);
      std::memcpy(registry.data(), &table, sizeof(table));
      (void)s.driver->SendRpc(NV_VGPU_MSG_FUNCTION_SET_REGISTRY, registry, absl::ZeroDuration());
    } else if (seed == 1) {
      (void)s.driver->SendRpc(NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL, Control(66456), absl::ZeroDuration());
    } else {
      (void)s.driver->SendRpc(NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC, std::vector<uint8_t>(32), absl::ZeroDuration());
      (void)s.driver->SendRpc(NV_VGPU_MSG_FUNCTION_FREE, std::vector<uint8_t>(16), absl::ZeroDuration());
    }
    Write(dir + "/command_" + std::to_string(seed), &s.driver->init_arguments(), gsp_fuzz::kArgumentsSize, s.bytes(),
          s.layout.size);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: gsp_queue_seedgen receive|command DIR\n");
    return 2;
  }
  if (std::string(argv[1]) == "receive") {
    Receive(argv[2]);
  } else {
    Command(argv[2]);
  }
  return 0;
}
