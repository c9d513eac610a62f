// The shapes the GSP message-queue fuzzers (gsp_receive_fuzzer.cc, gsp_command_fuzzer.cc) and their seed generator
// (gsp_queue_seedgen.cc) agree on. Queues of 0x22000 bytes (33 elements) keep inputs small and still hold an RPC of
// two records (16 + 1 elements).
#ifndef BAREGPU_TOOLS_FUZZ_GSP_QUEUE_FUZZ_H_
#define BAREGPU_TOOLS_FUZZ_GSP_QUEUE_FUZZ_H_

#include <cstdint>

namespace gsp_fuzz {

inline constexpr uint32_t kQueueSize = 0x22000;
// The shared region's page i is at bus address kBusBase + i * 4 KiB.
inline constexpr uint64_t kBusBase = 0x10000;
// gsp_command: the region has 2 * 0x22 + 1 pages (the queues' and the page table's).
inline constexpr uint32_t kRegionPages = 2 * (kQueueSize / 0x1000) + 1;
// gsp_command inputs start with MESSAGE_QUEUE_INIT_ARGUMENTS' first four members (32 bytes), then the region;
// gsp_receive inputs with the 4-byte reply size WaitFor expects, then the status queue.
inline constexpr uint32_t kArgumentsSize = 32;
inline constexpr uint32_t kReplySizeSize = 4;

}  // namespace gsp_fuzz

#endif  // BAREGPU_TOOLS_FUZZ_GSP_QUEUE_FUZZ_H_
