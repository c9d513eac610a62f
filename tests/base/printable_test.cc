// base::Printable: names that print as themselves stay as they are; anything a terminal would act on is quoted and
// escaped, so no name can forge a line or send an escape sequence.
#include "base/printable.h"

#include <random>
#include <string>

#include "gtest/gtest.h"

namespace base {
namespace {

TEST(PrintableTest, OrdinaryNamesAreUnchanged) {
  EXPECT_EQ(Printable("/lib/firmware/amdgpu/gc_11_0_0_mes_2.bin"), "/lib/firmware/amdgpu/gc_11_0_0_mes_2.bin");
  EXPECT_EQ(Printable("sim:navi31:a b"), "sim:navi31:a b");
  EXPECT_EQ(Printable("firmware-\xc3\xa9t\xc3\xa9 \xe2\x9c\x93"), "firmware-\xc3\xa9t\xc3\xa9 \xe2\x9c\x93");
  EXPECT_EQ(Printable("back\\slash"), "back\\slash");
}

TEST(PrintableTest, ControlCharactersAreEscapedInQuotes) {
  EXPECT_EQ(Printable("a\nb"), R"("a\nb")");
  EXPECT_EQ(Printable("\x1b[31mred"), R"("\x1b[31mred")");
  EXPECT_EQ(Printable(absl::string_view("nul\0x", 5)), R"("nul\x00x")");
  EXPECT_EQ(Printable("tab\there\r"), R"("tab\there\r")");
  EXPECT_EQ(Printable("del\x7f"), R"("del\x7f")");
  // Once quoted, quotes and backslashes are escaped too, so the quoted form reads back unambiguously.
  EXPECT_EQ(Printable("\"a\\\n"), R"("\"a\\\n")");
}

TEST(PrintableTest, NamesThatCouldPassForQuotedOnesAreQuoted) {
  EXPECT_EQ(Printable(""), R"("")");
  EXPECT_EQ(Printable("\"a\\nb\""), R"("\"a\\nb\"")");
}

TEST(PrintableTest, InvalidUtf8AndC1ControlsAreEscaped) {
  EXPECT_EQ(Printable("caf\xe9"), R"("caf\xe9")");  // Latin-1, not UTF-8
  EXPECT_EQ(Printable("\xc2\x9b"
                      "31m"),
            R"("\xc2\x9b31m")");                                      // U+009B, the C1 CSI
  EXPECT_EQ(Printable("\xc0\xaf"), R"("\xc0\xaf")");                  // overlong '/'
  EXPECT_EQ(Printable("\xed\xa0\x80"), R"("\xed\xa0\x80")");          // a surrogate
  EXPECT_EQ(Printable("\xf4\x90\x80\x80"), R"("\xf4\x90\x80\x80")");  // above U+10FFFF
  EXPECT_EQ(Printable("\xe2\x9c"), R"("\xe2\x9c")");                  // truncated
  // Valid UTF-8 inside a name that needs quoting stays readable.
  EXPECT_EQ(Printable("\xc3\xa9\n"), "\"\xc3\xa9\\n\"");
}

// Fuzz: whatever the bytes, the result holds no control byte, no C1 control and no invalid UTF-8.
TEST(PrintableTest, RandomBytesNeverReachTheTerminalRaw) {
  std::mt19937 rng(23);
  for (int round = 0; round < 20000; ++round) {
    std::string name(rng() % 12, '\0');
    for (char& c : name) c = static_cast<char>(rng() % 4 == 0 ? rng() % 0x20 : rng());
    const std::string out = Printable(name);
    for (unsigned char c : out) ASSERT_TRUE(c >= 0x20 && c != 0x7f) << out;
    EXPECT_EQ(Printable(out) == out, out.front() != '"');  // a quoted result would be quoted again
    if (out.front() != '"') {
      EXPECT_EQ(out, name);
    }
  }
}

}  // namespace
}  // namespace base
