// A C++ application of the installed library (tests/install/install_test.sh builds it with `pkg-config --cflags
// --libs baregpu-cpp`): opens the virtual GPU through hcq/device.h, writes a VRAM buffer, copies it to a second one
// with the copy queue, reads that back and checks it. With an argument PREFIX, it also checks that libbaregpu and
// the virtual GPU library it loaded are the ones under PREFIX (from /proc/self/maps). Exit status 0 on success.
//
// Usage: hcq_cpp_program DEVICE [PREFIX]
#include <cstdint>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "base/version.h"
#include "hcq/device.h"

namespace {

constexpr uint64_t kBufferBytes = 1 << 20;  // many pages, so the copies cross page boundaries

int Fail(const std::string& what) {
  std::cerr << "hcq_cpp_program: " << what << "\n";
  return 1;
}

// The file a mapping of this process whose name contains `library` comes from; "" when none.
std::string MappedFrom(const std::string& library) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    size_t path = line.find('/');
    if (path != std::string::npos && line.find(library, path) != std::string::npos) return line.substr(path);
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) return Fail("usage: hcq_cpp_program DEVICE [PREFIX]");
  auto device = hcq::Device::Open(argv[1]);
  if (!device.ok()) return Fail("hcq::Device::Open: " + device.status().ToString());
  hcq::Device& dev = **device;
  auto source = dev.allocator().alloc(kBufferBytes);
  auto destination = dev.allocator().alloc(kBufferBytes);
  if (!source.ok() || !destination.ok()) return Fail("alloc failed");

  std::vector<uint8_t> in(kBufferBytes), out(kBufferBytes);
  for (uint64_t i = 0; i < kBufferBytes; ++i) in[i] = static_cast<uint8_t>(i * 13 + 5);  // no zero page looks so
  if (absl::Status s = dev.allocator().copyin(*source, in); !s.ok()) return Fail("copyin: " + s.ToString());
  auto queue = dev.NewCopyQueue();
  queue->wait(dev.timeline_signal(), dev.timeline_value() - 1)
      .copy(destination->va(), source->va(), kBufferBytes)
      .signal(dev.timeline_signal(), dev.next_timeline());
  if (absl::Status s = queue->submit(dev); !s.ok()) return Fail("submit: " + s.ToString());
  if (absl::Status s = dev.synchronize(); !s.ok()) return Fail("synchronize: " + s.ToString());
  if (absl::Status s = dev.allocator().copyout(out, *destination); !s.ok()) return Fail("copyout: " + s.ToString());
  if (in != out) return Fail("the bytes copied on the GPU differ from those written");

  if (argc == 3) {
    const std::string prefix = argv[2];
    for (const std::string library : {"/libbaregpu.so", "/libbaregpu-sim.so"}) {
      const std::string from = MappedFrom(library);
      if (from.rfind(prefix, 0) != 0)
        return Fail(library.substr(1) + " is mapped from '" + from + "', not from " + prefix);
    }
  }
  std::cout << "hcq_cpp_program: baregpu " << BAREGPU_VERSION_STRING << ", " << dev.name() << ": " << kBufferBytes
            << " bytes copied on the GPU and back\n";
  return 0;
}
