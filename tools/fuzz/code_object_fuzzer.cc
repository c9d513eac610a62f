// libFuzzer target for the AMDGPU code-object parser (am/code_object.h): every input is parsed, and whatever the
// parser accepts is read in full (the whole image, each kernel's descriptor and code), so AddressSanitizer catches
// any range it let through that does not exist. Built and run by `tools/fuzz.sh code_object ...` (clang-19
// -fsanitize=fuzzer,address,undefined), seeded with the gfx1100 corpus the build compiles.
#include <cstddef>
#include <cstdint>

#include "am/code_object.h"
#include "am/implicit_arguments.h"

namespace {

volatile uint8_t sink;

void Touch(const uint8_t* bytes, size_t size) {
  uint8_t x = 0;
  for (size_t i = 0; i < size; ++i) x ^= bytes[i];
  sink = x;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<am::CodeObject> object = am::CodeObject::Parse({data, size}, "fuzz.co");
  if (!object.ok()) {
    // Every refusal says which file it is about.
    if (object.status().message().substr(0, 9) != "fuzz.co: ") __builtin_trap();
    return 0;
  }
  const std::vector<uint8_t>& image = object->image();
  Touch(image.data(), image.size());
  for (const am::CodeObject::Kernel& kernel : object->kernels()) {
    // The parser promises the descriptor and the code lie inside the image, the entry 256-byte aligned.
    if (kernel.descriptor_offset + sizeof(am::KernelDescriptor) > image.size()) __builtin_trap();
    if (kernel.entry_offset + kernel.code_size > image.size() || kernel.entry_offset % 256 != 0) __builtin_trap();
    Touch(image.data() + kernel.entry_offset, kernel.code_size);
    if (!object->FindKernel(kernel.name).ok()) __builtin_trap();
    // Metadata arguments lie inside the kernarg segment, and so does every implicit field a launcher writes.
    for (const am::CodeObject::Kernel::Argument& argument : kernel.arguments) {
      if (uint64_t{argument.offset} + argument.size > kernel.kernarg_size()) __builtin_trap();
    }
    const am::ImplicitArguments implicit = am::ImplicitArguments::For(kernel);
    for (const am::ImplicitArguments::Field& field : implicit.fields()) {
      if (field.offset + field.bytes > implicit.size()) __builtin_trap();
    }
  }
  return 0;
}
