// The stress tests' kernels: code objects of the gfx1100 test corpus (tests/am/sim/isa/kernels), built beside the
// tests in $BAREGPU_BUILD_ROOT.
#ifndef BAREGPU_TESTS_STRESS_CORPUS_H_
#define BAREGPU_TESTS_STRESS_CORPUS_H_

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace stress {

// The code object NAME.co ("vector_add-O2"), empty when it is not built.
inline std::vector<char> ReadCodeObject(const std::string& stem) {
  const char* build = std::getenv("BAREGPU_BUILD_ROOT");
  std::ifstream file(std::string(build ? build : ".") + "/tests/am/sim/isa/kernels/" + stem + ".co", std::ios::binary);
  return {std::istreambuf_iterator<char>(file), {}};
}

// The code object with the first dword of its .text replaced (Elf64_Ehdr e_shoff at 0x28, e_shentsize/e_shnum/
// e_shstrndx at 0x3a; Elf64_Shdr sh_name at 0, sh_offset at 0x18: elf.h): a kernel that starts with `instruction`.
inline std::vector<char> WithFirstInstruction(std::vector<char> code, uint32_t instruction) {
  auto read = [&](size_t at, auto value) {
    std::memcpy(&value, code.data() + at, sizeof(value));
    return value;
  };
  const uint64_t section_headers = read(0x28, uint64_t{});
  const uint16_t entry_size = read(0x3a, uint16_t{}), count = read(0x3c, uint16_t{}), names = read(0x3e, uint16_t{});
  const uint64_t name_table = read(section_headers + names * entry_size + 0x18, uint64_t{});
  for (uint16_t i = 0; i < count; ++i) {
    const uint64_t header = section_headers + i * entry_size;
    if (std::string(code.data() + name_table + read(header, uint32_t{})) == ".text") {
      std::memcpy(code.data() + read(header + 0x18, uint64_t{}), &instruction, 4);
    }
  }
  return code;
}

}  // namespace stress

#endif  // BAREGPU_TESTS_STRESS_CORPUS_H_
