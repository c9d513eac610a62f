#include "serve/protocol.h"

#include <cstring>

namespace serve {
namespace {

constexpr std::array<absl::string_view, kCommandCount> kCommandNames = {
    "PROBE",     "MAP_BAR",    "MAP_SYSMEM_FD", "CFG_READ",          "CFG_WRITE",     "RESET",
    "MMIO_READ", "MMIO_WRITE", "MAP_SYSMEM",    "SYSMEM_READ",       "SYSMEM_WRITE",  "RESIZE_BAR",
    "PING",      "MAP_BAR_FD", "DMA_READ",      "REGISTER_SEQUENCE", "HOLDER_STATUS",
};

template <typename T>
T LoadLittleEndian(const uint8_t* bytes) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(bytes[i]) << (8 * i);
  return value;
}

template <typename T>
void StoreLittleEndian(uint8_t* bytes, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) bytes[i] = static_cast<uint8_t>(value >> (8 * i));
}

}  // namespace

std::optional<absl::string_view> CommandName(uint8_t command) {
  if (command >= kCommandCount) return std::nullopt;
  return kCommandNames[command];
}

bool IsPostedWrite(Command command) { return command == Command::kMmioWrite || command == Command::kSysmemWrite; }

Request Request::Decode(const std::array<uint8_t, kRequestHeaderSize>& bytes) {
  Request r;
  r.command = bytes[0];
  r.device = LoadLittleEndian<uint32_t>(&bytes[1]);
  r.bar = LoadLittleEndian<uint32_t>(&bytes[5]);
  for (size_t i = 0; i < r.args.size(); ++i) r.args[i] = LoadLittleEndian<uint64_t>(&bytes[9 + 8 * i]);
  return r;
}

std::array<uint8_t, kRequestHeaderSize> Request::Encode() const {
  std::array<uint8_t, kRequestHeaderSize> bytes{};
  bytes[0] = command;
  StoreLittleEndian(&bytes[1], device);
  StoreLittleEndian(&bytes[5], bar);
  for (size_t i = 0; i < args.size(); ++i) StoreLittleEndian(&bytes[9 + 8 * i], args[i]);
  return bytes;
}

Reply Reply::Decode(const std::array<uint8_t, kReplyHeaderSize>& bytes) {
  Reply r;
  r.status = static_cast<ReplyStatus>(bytes[0]);
  r.value0 = LoadLittleEndian<uint64_t>(&bytes[1]);
  r.value1 = LoadLittleEndian<uint64_t>(&bytes[9]);
  return r;
}

std::array<uint8_t, kReplyHeaderSize> Reply::Encode() const {
  std::array<uint8_t, kReplyHeaderSize> bytes{};
  bytes[0] = static_cast<uint8_t>(status);
  StoreLittleEndian(&bytes[1], value0);
  StoreLittleEndian(&bytes[9], value1);
  return bytes;
}

std::vector<uint8_t> EncodeRegisterSteps(std::span<const pci::RegisterStep> steps) {
  std::vector<uint8_t> bytes(steps.size() * kRegisterStepSize);
  for (size_t i = 0; i < steps.size(); ++i) {
    uint8_t* at = &bytes[i * kRegisterStepSize];
    StoreLittleEndian(at, static_cast<uint32_t>(steps[i].kind));
    StoreLittleEndian(at + 4, steps[i].offset);
    StoreLittleEndian(at + 8, steps[i].value);
  }
  return bytes;
}

std::vector<pci::RegisterStep> DecodeRegisterSteps(std::span<const uint8_t> bytes) {
  std::vector<pci::RegisterStep> steps(bytes.size() / kRegisterStepSize);
  for (size_t i = 0; i < steps.size(); ++i) {
    const uint8_t* at = &bytes[i * kRegisterStepSize];
    steps[i] = {static_cast<pci::RegisterStep::Kind>(LoadLittleEndian<uint32_t>(at)),
                LoadLittleEndian<uint32_t>(at + 4), LoadLittleEndian<uint32_t>(at + 8)};
  }
  return steps;
}

}  // namespace serve
