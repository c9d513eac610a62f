// The stress tests' kernels: code objects of the gfx1100 test corpus (tests/am/sim/isa/kernels), built beside the
// tests in $BAREGPU_BUILD_ROOT.
#ifndef BAREGPU_TESTS_STRESS_CORPUS_H_
#define BAREGPU_TESTS_STRESS_CORPUS_H_

#include <cstdlib>
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

}  // namespace stress

#endif  // BAREGPU_TESTS_STRESS_CORPUS_H_
