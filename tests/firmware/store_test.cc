// The firmware search path, compressed files, and what a missing file reports.
#include "firmware/store.h"

#include <lzma.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <zstd.h>

#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "firmware/decompress.h"
#include "gtest/gtest.h"

namespace firmware {
namespace {

std::string ZstdCompress(const std::string& data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3));
  return out;
}

std::string XzCompress(const std::string& data) {
  std::string out(lzma_stream_buffer_bound(data.size()), '\0');
  size_t pos = 0;
  lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const uint8_t*>(data.data()), data.size(),
                          reinterpret_cast<uint8_t*>(out.data()), &pos, out.size());
  out.resize(pos);
  return out;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/baregpu-store-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    for (const char* root : {"/a", "/a/amdgpu", "/b", "/b/amdgpu"}) mkdir((dir_ + root).c_str(), 0755);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  void Write(const std::string& relative, const std::string& data) {
    std::ofstream(dir_ + relative, std::ios::binary) << data;
  }
  std::string Path(const std::string& relative) const { return dir_ + relative; }

  std::string dir_;
  const std::string payload_ = std::string(5000, 'x') + "firmware bytes" + std::string(3000, '\x01');
};

TEST_F(StoreTest, CandidatesGoRootByRootPlainThenZstThenXz) {
  Store store({Path("/a"), Path("/b/")});
  EXPECT_EQ(
      store.Candidates("x.bin"),
      (std::vector<std::string>{Path("/a/amdgpu/x.bin"), Path("/a/amdgpu/x.bin.zst"), Path("/a/amdgpu/x.bin.xz"),
                                Path("/b/amdgpu/x.bin"), Path("/b/amdgpu/x.bin.zst"), Path("/b/amdgpu/x.bin.xz")}));
}

TEST_F(StoreTest, LoadsPlainZstdAndXzAndTheFirstRootWins) {
  Write("/b/amdgpu/plain.bin", payload_);
  Write("/a/amdgpu/z.bin.zst", ZstdCompress(payload_));
  Write("/b/amdgpu/z.bin", "the system copy");
  Write("/b/amdgpu/x.bin.xz", XzCompress(payload_));
  Store store({Path("/a"), Path("/b")});
  for (const char* name : {"plain.bin", "z.bin", "x.bin"}) {
    auto loaded = store.Load(name);
    ASSERT_TRUE(loaded.ok()) << name << ": " << loaded.status();
    EXPECT_EQ(loaded->data, payload_) << name;
  }
  EXPECT_EQ(store.Load("z.bin")->path, Path("/a/amdgpu/z.bin.zst"));
}

TEST_F(StoreTest, MissingFileListsEveryPathTried) {
  Store store({Path("/a"), Path("/b")});
  auto loaded = store.Load("gc_11_0_0_mec.bin");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound);
  for (const std::string& candidate : store.Candidates("gc_11_0_0_mec.bin")) {
    EXPECT_TRUE(absl::StrContains(loaded.status().message(), candidate)) << candidate;
  }
  EXPECT_TRUE(absl::StrContains(loaded.status().message(), "BAREGPU_FIRMWARE_PATH")) << loaded.status();
  const Location location = store.Locate("gc_11_0_0_mec.bin");
  EXPECT_FALSE(location.path.has_value());
  EXPECT_EQ(location.tried.size(), 6u);
}

// A root that has a file's older name wins over a later root with its newer one: a release is never completed from
// another (the 20230210 firmware has gc_11_0_0_mes.bin only; the virtual set behind it has gc_11_0_0_mes_2.bin).
TEST_F(StoreTest, FallbackNamesAreTriedRootByRoot) {
  Write("/a/amdgpu/old.bin", "release a");
  Write("/b/amdgpu/new.bin", "release b");
  Store store({Path("/a"), Path("/b")});
  auto loaded = store.Load("new.bin", {"old.bin"});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->data, "release a");
  EXPECT_EQ(loaded->name, "old.bin");
  auto missing = store.Load("none.bin", {"older.bin"});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "amdgpu/none.bin or amdgpu/older.bin not found"))
      << missing.status();
  EXPECT_TRUE(absl::StrContains(missing.status().message(), Path("/b/amdgpu/older.bin.xz"))) << missing.status();
}

TEST_F(StoreTest, CorruptCompressedFilesAreErrorsNamingThePath) {
  Write("/a/amdgpu/bad.bin.zst", "this is not a zstd frame");
  const std::string zst = ZstdCompress(payload_);
  Write("/a/amdgpu/short.bin.zst", zst.substr(0, zst.size() - 3));
  std::string xz = XzCompress(payload_);
  Write("/a/amdgpu/cut.bin.xz", xz.substr(0, xz.size() / 2));
  Write("/a/amdgpu/empty.bin.zst", "");
  Store store({Path("/a")});
  for (const char* name : {"bad.bin", "short.bin", "cut.bin", "empty.bin"}) {
    auto loaded = store.Load(name);
    ASSERT_FALSE(loaded.ok()) << name;
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss) << loaded.status();
    EXPECT_TRUE(absl::StrContains(loaded.status().message(), Path("/a/amdgpu/") + name)) << loaded.status();
  }
}

TEST(DecompressTest, RefusesOutputBeyondTheLimit) {
  const std::string big(100000, 'a');
  auto z = Decompress("big.bin.zst", ZstdCompress(big), Compression::kZstd, 50000);
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.status().code(), absl::StatusCode::kOutOfRange);
  auto x = Decompress("big.bin.xz", XzCompress(big), Compression::kXz, 50000);
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(*Decompress("big.bin.xz", XzCompress(big), Compression::kXz, 100000), big);
}

TEST(DefaultSearchRootsTest, EnvironmentFirstThenTheSystemDirectories) {
  const char* old = std::getenv(kFirmwarePathEnv);
  const std::string saved = old ? old : "";
  setenv(kFirmwarePathEnv, "/opt/fw::/home/me/fw", 1);
  EXPECT_EQ(DefaultSearchRoots(),
            (std::vector<std::string>{"/opt/fw", "/home/me/fw", "/lib/firmware/updates", "/lib/firmware"}));
  unsetenv(kFirmwarePathEnv);
  EXPECT_EQ(DefaultSearchRoots(), (std::vector<std::string>{"/lib/firmware/updates", "/lib/firmware"}));
  if (old) setenv(kFirmwarePathEnv, saved.c_str(), 1);
}

// A virtual GPU's own firmware comes after what the user named (so BAREGPU_FIRMWARE_PATH=/lib/firmware boots it
// with real files) and before the system's (which may hold any release).
TEST(DefaultSearchRootsTest, TheUsersRootsComeBeforeTheDevicesAndTheSystemsAfter) {
  const char* old = std::getenv(kFirmwarePathEnv);
  const std::string saved = old ? old : "";
  setenv(kFirmwarePathEnv, "/opt/fw", 1);
  EXPECT_EQ(DeviceSearchRoots({"/virtual"}),
            (std::vector<std::string>{"/opt/fw", "/virtual", "/lib/firmware/updates", "/lib/firmware"}));
  unsetenv(kFirmwarePathEnv);
  EXPECT_EQ(DeviceSearchRoots({"/virtual"}),
            (std::vector<std::string>{"/virtual", "/lib/firmware/updates", "/lib/firmware"}));
  if (old) setenv(kFirmwarePathEnv, saved.c_str(), 1);
}

}  // namespace
}  // namespace firmware
