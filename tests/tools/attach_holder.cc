// A process that holds a device, for the attach tests (attach_test.cc): opens DEVICE through HCQ (the debug endpoint
// follows BAREGPU_DEBUG_ENDPOINT), leaves known values where a debugger can find them, says where on stdout, and
// holds the device until its stdin closes (or kHoldLimit passes). Before it says ready, one wait has slept and timed
// out (its waits' counts are what `smi` attached reports). Then it checks the device still works (whatever the
// debuggers did to the endpoint) and exits 0, or 1 with a message on stderr.
//
// stdout, one line: "ready VRAM_VA HOST_VA SCRATCH_VALUE ENDPOINT_PATH" (ENDPOINT_PATH "-" when none).
// With a second argument "spin", it first launches one workgroup (two wave32 waves) of the corpus's vector_add whose
// first instruction is s_branch to itself, so a debugger finds waves running; the close ends them (RESET_WAVES).
#include <poll.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "am/regs/database.h"
#include "hcq/amd/amd_device.h"
#include "hcq/device.h"
#include "hcq/program.h"
#include "tests/stress/corpus.h"

namespace {

// The holder gives up on its own if the test never closes its stdin (a test that crashed).
constexpr int kHoldLimitMs = 120'000;
// Values a debugger must find: a GC scratch register (CP_SCRATCH, unused by the driver for SCRATCH_REG0) and the
// buffers' bytes (byte i of each buffer is a function of i, distinct between the two).
constexpr uint32_t kScratchValue = 0x5ca1ab1e;
constexpr uint64_t kBufferBytes = 8192;  // two pages: a read across the page boundary translates twice
// s_branch -1 (SOPP 0x17f << 23, s_branch = opcode 32 in LLVM's GFX11 SOPP table): a wave that jumps to itself.
constexpr uint32_t kBranchToItself = (0x17fu << 23) | (32u << 16) | 0xffffu;
constexpr uint32_t kSpinWorkgroupSize = 64;  // two wave32 waves
// Longer than a wait's spin (a few microseconds), so that it sleeps.
constexpr absl::Duration kSleepingWait = absl::Milliseconds(5);
uint8_t VramByte(uint64_t i) { return static_cast<uint8_t>(i * 7 + 1); }
uint8_t HostByte(uint64_t i) { return static_cast<uint8_t>(i * 13 + 5); }

int Fail(const std::string& what) {
  std::fprintf(stderr, "attach_holder: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const bool spin = argc == 3 && std::string(argv[2]) == "spin";
  if (argc != 2 && !spin) return Fail("usage: attach_holder DEVICE [spin]");
  auto opened = hcq::Device::Open(argv[1]);
  if (!opened.ok()) return Fail(std::string(opened.status().message()));
  auto* device = dynamic_cast<hcq::amd::AmdDevice*>(opened->get());
  if (device == nullptr) return Fail("not an AMD device");

  auto vram = device->allocator().alloc(kBufferBytes, hcq::BufferSpec{.kind = hcq::MemoryKind::kVram});
  auto host = device->allocator().alloc(kBufferBytes, hcq::BufferSpec{.kind = hcq::MemoryKind::kHost});
  if (!vram.ok() || !host.ok()) return Fail("allocating the buffers");
  std::vector<uint8_t> vram_bytes(kBufferBytes);
  for (uint64_t i = 0; i < kBufferBytes; ++i) vram_bytes[i] = VramByte(i);
  if (auto s = device->allocator().copyin(*vram, vram_bytes); !s.ok()) return Fail(std::string(s.message()));
  for (uint64_t i = 0; i < kBufferBytes; ++i) host->cpu()[i] = HostByte(i);
  // One wait that sleeps on the device's interrupt and ends at its limit: smi attached reports the holder's waits.
  auto never = device->NewSignal(0);
  if (!never.ok()) return Fail(std::string(never.status().message()));
  if (never->wait(1, kSleepingWait).code() != absl::StatusCode::kDeadlineExceeded) {
    return Fail("a wait on a signal nothing writes did not time out");
  }
  device->FreeSignal(*never);

  am::Device& am = device->am();
  auto scratch = am::regs::ResolveAddress(am.bases(), "SCRATCH_REG0", am::regs::Ip::kGc);
  if (!scratch.ok()) return Fail(std::string(scratch.status().message()));
  am.io().WriteDword(*scratch, kScratchValue);

  std::unique_ptr<hcq::Program> program;
  std::unique_ptr<hcq::ComputeQueue> queue;
  if (spin) {
    const std::vector<char> code =
        stress::WithFirstInstruction(stress::ReadCodeObject("vector_add-O2"), kBranchToItself);
    auto loaded = device->LoadProgram(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(code.data()), code.size()), "vector_add");
    if (!loaded.ok()) return Fail(std::string(loaded.status().message()));
    program = std::move(*loaded);
    auto args = device->NewArgs(program->args_size(), 3);
    if (!args.ok()) return Fail(std::string(args.status().message()));
    queue = device->NewComputeQueue();
    queue->exec(*program, *args, {1, 1, 1}, {kSpinWorkgroupSize, 1, 1});
    if (auto s = queue->submit(*device); !s.ok()) return Fail(std::string(s.message()));
  }

  const std::string endpoint = device->debug_endpoint_path();
  std::printf("ready %#llx %#llx %#x %s\n", static_cast<unsigned long long>(vram->va()),
              static_cast<unsigned long long>(host->va()), kScratchValue, endpoint.empty() ? "-" : endpoint.c_str());
  std::fflush(stdout);

  // Hold until the test closes stdin.
  pollfd in{STDIN_FILENO, POLLIN, 0};
  if (::poll(&in, 1, kHoldLimitMs) <= 0) return Fail("the test never released the device");
  char drain[64];
  while (::read(STDIN_FILENO, drain, sizeof(drain)) > 0) {
  }

  // The device must have survived its debuggers: the buffer reads back through the GPU as written.
  std::vector<uint8_t> back(kBufferBytes);
  if (auto s = device->allocator().copyout(back, *vram); !s.ok()) return Fail(std::string(s.message()));
  if (back != vram_bytes) return Fail("the VRAM buffer changed under the holder");
  return 0;
}
