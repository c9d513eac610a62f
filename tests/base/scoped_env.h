// An environment variable set (or unset) for one scope, the old value put back after: for tests that point the code
// at a state directory or a firmware path.
#ifndef BAREGPU_TESTS_BASE_SCOPED_ENV_H_
#define BAREGPU_TESTS_BASE_SCOPED_ENV_H_

#include <cstdlib>
#include <optional>
#include <string>

namespace base::testing {

class ScopedEnv {
 public:
  // nullopt unsets the variable for the scope.
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace base::testing

#endif  // BAREGPU_TESTS_BASE_SCOPED_ENV_H_
