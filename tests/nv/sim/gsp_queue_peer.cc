// The virtual GSP's message queues (nv/sim/gsp_message_queue.h) as a separate process over a shared file, so that a
// foreign driver (tinygrad's NVRpcQueue, in gsp_message_queue_tinygrad_test.py) can talk to them through memory.
//
//   gsp_queue_peer FILE      FILE: the driver's system memory, mapped shared; commands on stdin, one per line:
//     map BUS OFFSET         the 4 KiB page at file OFFSET is at bus address BUS (hex)
//     start RMARGS           read GSP_ARGUMENTS_CACHED.messageQueueInitArguments at bus address RMARGS and start
//     doorbell               the driver wrote NV_PGSP_QUEUE_HEAD: read every whole command and reply to each with
//                            rpc_result NV_OK and the first min(size, 1024) bytes of its parameters
//     event FUNCTION HEX     write an event with these parameters
//     driver OFFSET BUS...   the driver's end instead (nv/gsp/message_queue.h): lay out default-sized queues at file
//                            OFFSET whose pages are at the bus addresses BUS... (nobody consumes)
//     send FUNCTION HEX      the driver sends an RPC
//     quit
//   Each command answers with lines: "command FUNCTION SEQUENCE RECORDS FIRST_ELEMENT HEX" for each command read,
//   then "ok", or "error MESSAGE" (the model's recorded errors, or a refused write).
// Numbers are hex without 0x. The process exits when stdin closes.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "nv/gsp/layouts.h"
#include "nv/gsp/message_queue.h"
#include "nv/regs/status_constants.h"
#include "nv/sim/gsp_message_queue.h"
#include "tests/nv/sim/host_device_memory.h"

namespace {

// The model echoes at most this much of a command (one status element: tinygrad's read_resp reads replies that
// fit one element only; see the test).
constexpr size_t kEchoBytes = 1024;

std::string Hex(std::span<const uint8_t> bytes) {
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gsp_queue_peer FILE\n";
    return 2;
  }
  const int fd = open(argv[1], O_RDWR);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    std::perror(argv[1]);
    return 1;
  }
  void* base = mmap(nullptr, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  std::cout << std::hex;
  nv::sim::testing::HostDeviceMemory memory;
  nv::sim::GspMessageQueue gsp(memory);
  std::unique_ptr<nv::gsp::MessageQueue> driver;
  size_t errors_reported = 0;
  auto finish = [&] {
    if (gsp.errors().size() > errors_reported) {
      for (; errors_reported < gsp.errors().size(); ++errors_reported) {
        std::cout << "error " << gsp.errors()[errors_reported].message() << "\n";
      }
    } else {
      std::cout << "ok\n";
    }
    std::cout.flush();
  };

  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string verb;
    in >> verb >> std::hex;
    if (verb == "map") {
      uint64_t bus, offset;
      in >> bus >> offset;
      if (offset + nv::sim::testing::HostDeviceMemory::kPage > static_cast<uint64_t>(st.st_size)) {
        std::cout << "error page offset " << offset << " is beyond the file\n" << std::flush;
        continue;
      }
      memory.MapPage(bus, static_cast<uint8_t*>(base) + offset);
      std::cout << "ok\n" << std::flush;
    } else if (verb == "start") {
      uint64_t rm_args;
      in >> rm_args;
      // GSP_ARGUMENTS_CACHED starts with MESSAGE_QUEUE_INIT_ARGUMENTS; tinygrad's (570) copy has only its first four
      // members (32 bytes), at the offsets of 535's.
      nv::gsp::MESSAGE_QUEUE_INIT_ARGUMENTS arguments{};
      constexpr size_t kCommon = offsetof(nv::gsp::MESSAGE_QUEUE_INIT_ARGUMENTS, locklessCmdQueueOffset);
      if (!memory.ReadSystem(rm_args, std::span(reinterpret_cast<uint8_t*>(&arguments), kCommon))) {
        std::cout << "error the RM arguments at " << rm_args << " are not mapped\n" << std::flush;
        continue;
      }
      gsp.Start(arguments);
      finish();
    } else if (verb == "doorbell") {
      while (std::optional<nv::sim::GspCommand> command = gsp.ReadCommand()) {
        std::cout << "command " << command->function << " " << command->sequence << " " << command->records << " "
                  << command->first_element << " " << Hex(command->payload) << "\n";
        const std::span<const uint8_t> echo =
            std::span(command->payload).first(std::min(command->payload.size(), kEchoBytes));
        absl::Status written = gsp.WriteReply(*command, nv::regs::status::NV_OK, echo);
        if (!written.ok()) std::cout << "error " << written.message() << "\n";
      }
      finish();
    } else if (verb == "event") {
      uint32_t function;
      std::string hex;
      in >> function >> hex;
      const std::string bytes = absl::HexStringToBytes(hex);
      absl::Status written =
          gsp.WriteEvent(function, std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
      if (!written.ok()) {
        std::cout << "error " << written.message() << "\n" << std::flush;
      } else {
        finish();
      }
    } else if (verb == "driver") {
      uint64_t offset, bus;
      std::vector<uint64_t> pages;
      in >> offset;
      while (in >> bus) pages.push_back(bus);
      absl::StatusOr<nv::gsp::SharedRegionLayout> layout = nv::gsp::LayoutSharedRegion();
      if (!layout.ok() || offset + layout->size > static_cast<uint64_t>(st.st_size)) {
        std::cout << "error the driver's region does not fit the file\n" << std::flush;
        continue;
      }
      auto created =
          nv::gsp::MessageQueue::Create(std::span(static_cast<uint8_t*>(base) + offset, layout->size), pages, [] {});
      if (!created.ok()) {
        std::cout << "error " << created.status().message() << "\n" << std::flush;
        continue;
      }
      driver = std::move(*created);
      std::cout << "ok\n" << std::flush;
    } else if (verb == "send") {
      uint32_t function;
      std::string hex;
      in >> function >> hex;
      const std::string bytes = absl::HexStringToBytes(hex);
      absl::Status sent =
          driver ? driver->SendRpc(function, std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
                                   absl::Seconds(1))
                 : absl::FailedPreconditionError("no driver");
      std::cout << (sent.ok() ? "ok" : "error " + std::string(sent.message())) << "\n" << std::flush;
    } else if (verb == "quit") {
      break;
    } else {
      std::cout << "error unknown command " << verb << "\n" << std::flush;
    }
  }
  munmap(base, st.st_size);
  close(fd);
  return 0;
}
