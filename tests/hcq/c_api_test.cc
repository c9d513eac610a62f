// The C API: handles, error codes and the per-thread message, and the same semantics as the C++ interface.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "am/sim/discovery_table.h"
#include "am/sim/navi31.h"
#include "gtest/gtest.h"
#include "hcq/hcq.h"
#include "pci/sim/persistent_state.h"
#include "tests/am/sim/sim_state_dir.h"

namespace {

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();

class CApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:capi").ok());
    ASSERT_EQ(hcq_device_open("sim:navi31:capi", &dev_), HCQ_OK) << hcq_last_error();
  }
  void TearDown() override { hcq_device_close(dev_); }
  hcq_device* dev_ = nullptr;
};

TEST_F(CApiTest, OpeningAnUnknownDeviceFailsWithAMessage) {
  hcq_device* other = nullptr;
  EXPECT_NE(hcq_device_open("sim:no-such-gpu", &other), HCQ_OK);
  EXPECT_EQ(other, nullptr);
  EXPECT_NE(std::string(hcq_last_error()), "");
  // The message is per thread.
  std::thread([] { EXPECT_EQ(std::string(hcq_last_error()), ""); }).join();
  EXPECT_EQ(hcq_device_open(nullptr, &other), HCQ_ERROR_INVALID_ARGUMENT);
}

TEST_F(CApiTest, QueuesSignalWithConstantsAndVariables) {
  hcq_signal* signal = nullptr;
  ASSERT_EQ(hcq_signal_new(dev_, 0, &signal), HCQ_OK);
  hcq_queue* queue = nullptr;
  ASSERT_EQ(hcq_queue_new_compute(dev_, &queue), HCQ_OK);
  hcq_queue_signal_var(queue, signal, 0);
  ASSERT_EQ(hcq_queue_bind(queue), HCQ_OK) << hcq_last_error();
  for (uint64_t v = 1; v <= 10; ++v) {
    ASSERT_EQ(hcq_queue_submit(queue, &v, 1), HCQ_OK) << hcq_last_error();
    ASSERT_EQ(hcq_signal_wait(signal, v, 5000), HCQ_OK) << hcq_last_error();
  }
  EXPECT_EQ(hcq_signal_value(signal), 10u);
  EXPECT_EQ(hcq_queue_submit(queue, nullptr, 0), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hcq_last_error()).find("variable 0"), std::string::npos) << hcq_last_error();
  hcq_queue_free(queue);
  hcq_signal_free(signal);
}

TEST_F(CApiTest, WaitTimesOutWithTimeoutCode) {
  hcq_signal* signal = nullptr;
  ASSERT_EQ(hcq_signal_new(dev_, 0, &signal), HCQ_OK);
  EXPECT_EQ(hcq_signal_wait(signal, 1, 10), HCQ_ERROR_TIMEOUT);
  hcq_signal_set_value(signal, 1);
  EXPECT_EQ(hcq_signal_wait(signal, 1, 10), HCQ_OK);
  hcq_signal_free(signal);
}

TEST_F(CApiTest, CopiesThroughBuffersAndCopyQueue) {
  hcq_buffer *a = nullptr, *b = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, 1 << 20, 0, &a), HCQ_OK);
  ASSERT_EQ(hcq_buffer_alloc(dev_, 1 << 20, 1, &b), HCQ_OK);
  EXPECT_NE(hcq_buffer_address(a), 0u);
  EXPECT_EQ(hcq_buffer_size(a), 1u << 20);
  std::string data(1 << 20, 'x');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  ASSERT_EQ(hcq_buffer_copyin(a, data.data(), data.size()), HCQ_OK) << hcq_last_error();
  hcq_queue* copy = nullptr;
  ASSERT_EQ(hcq_queue_new_copy(dev_, &copy), HCQ_OK);
  hcq_signal* timeline = hcq_device_timeline_signal(dev_);
  hcq_queue_wait(copy, timeline, hcq_device_timeline_value(dev_) - 1);
  hcq_queue_copy(copy, hcq_buffer_address(b), hcq_buffer_address(a), data.size());
  hcq_queue_signal(copy, timeline, hcq_device_next_timeline(dev_));
  ASSERT_EQ(hcq_queue_submit(copy, nullptr, 0), HCQ_OK) << hcq_last_error();
  ASSERT_EQ(hcq_device_synchronize(dev_), HCQ_OK) << hcq_last_error();
  EXPECT_EQ(std::memcmp(hcq_buffer_cpu(b), data.data(), data.size()), 0);
  std::string back(data.size(), '\0');
  ASSERT_EQ(hcq_buffer_copyout(back.data(), a, back.size()), HCQ_OK);
  EXPECT_EQ(back, data);
  // A compute-only command on a copy queue is refused at submit.
  hcq_queue_memory_barrier(copy);
  EXPECT_EQ(hcq_queue_submit(copy, nullptr, 0), HCQ_ERROR_INVALID_ARGUMENT);
  hcq_queue_free(copy);
  hcq_buffer_free(a);
  hcq_buffer_free(b);
}

// A second device copies from this device's host buffer into its own VRAM and signals this device's signal.
TEST_F(CApiTest, APeerDeviceReachesMappedBuffersAndSharedSignals) {
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:capi-peer").ok());
  hcq_device* peer = nullptr;
  ASSERT_EQ(hcq_device_open("sim:navi31:capi-peer", &peer), HCQ_OK) << hcq_last_error();
  hcq_buffer *source = nullptr, *destination = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, 4096, 1, &source), HCQ_OK);
  ASSERT_EQ(hcq_buffer_alloc(peer, 4096, 0, &destination), HCQ_OK);
  std::memset(hcq_buffer_cpu(source), 0x6b, 4096);
  std::memset(hcq_buffer_cpu(destination), 0, 4096);
  hcq_signal* done = nullptr;
  ASSERT_EQ(hcq_signal_new(dev_, 0, &done), HCQ_OK);

  ASSERT_EQ(hcq_buffer_map(peer, source), HCQ_OK) << hcq_last_error();
  ASSERT_EQ(hcq_device_share_signals(dev_, peer), HCQ_OK) << hcq_last_error();
  hcq_queue* copy = nullptr;
  ASSERT_EQ(hcq_queue_new_copy(peer, &copy), HCQ_OK);
  hcq_queue_copy(copy, hcq_buffer_address(destination), hcq_buffer_address(source), 4096);
  hcq_queue_signal(copy, done, 1);
  ASSERT_EQ(hcq_queue_submit(copy, nullptr, 0), HCQ_OK) << hcq_last_error();
  ASSERT_EQ(hcq_signal_wait(done, 1, 10000), HCQ_OK) << hcq_last_error();
  EXPECT_EQ(static_cast<const uint8_t*>(hcq_buffer_cpu(destination))[4095], 0x6b);
  EXPECT_EQ(hcq_buffer_map(peer, nullptr), HCQ_ERROR_INVALID_ARGUMENT);

  hcq_queue_free(copy);
  hcq_signal_free(done);
  hcq_buffer_free(source);
  hcq_buffer_free(destination);
  hcq_device_close(peer);
}

// The C API's allocation of UINT64_MAX bytes fails naming that size (it once said "0 bytes").
TEST_F(CApiTest, AnAllocationTooLargeNamesTheRequestedSize) {
  for (int host : {0, 1}) {
    hcq_buffer* buffer = nullptr;
    EXPECT_NE(hcq_buffer_alloc(dev_, UINT64_MAX, host, &buffer), HCQ_OK);
    EXPECT_EQ(buffer, nullptr);
    const std::string error = hcq_last_error();
    EXPECT_NE(error.find("18446744073709551615 bytes"), std::string::npos) << error;
    EXPECT_EQ(error.find(" 0 bytes"), std::string::npos) << error;
  }
}

// Running out of signals tells a C caller what it can do (free signals), not only the C++ option it cannot reach.
TEST_F(CApiTest, SignalExhaustionSaysWhatACCallerCanDo) {
  std::vector<hcq_signal*> signals;
  hcq_status status = HCQ_OK;
  for (int i = 0; i < 4096 && status == HCQ_OK; ++i) {
    hcq_signal* signal = nullptr;
    status = hcq_signal_new(dev_, 0, &signal);
    if (status == HCQ_OK) signals.push_back(signal);
  }
  EXPECT_EQ(status, HCQ_ERROR_RESOURCE_EXHAUSTED);
  const std::string error = hcq_last_error();
  EXPECT_NE(error.find("hcq_signal_free"), std::string::npos) << error;
  EXPECT_NE(error.find("Signal.close()"), std::string::npos) << error;
  EXPECT_NE(error.find("the C API and Python always use the default"), std::string::npos) << error;
  // Freeing one makes room again.
  ASSERT_FALSE(signals.empty());
  hcq_signal_free(signals.back());
  signals.pop_back();
  hcq_signal* again = nullptr;
  EXPECT_EQ(hcq_signal_new(dev_, 0, &again), HCQ_OK) << hcq_last_error();
  signals.push_back(again);
  for (hcq_signal* signal : signals) hcq_signal_free(signal);
}

TEST_F(CApiTest, LoadingGarbageAsACodeObjectIsAnError) {
  const char garbage[] = "not an ELF file";
  hcq_program* program = nullptr;
  EXPECT_NE(hcq_program_load(dev_, garbage, sizeof(garbage), "vector_add", &program), HCQ_OK);
  EXPECT_EQ(program, nullptr);
  EXPECT_NE(std::string(hcq_last_error()), "");
}

// Issue 19, defect 3: closing a device while its queues wait on signals that never come stops the engines before
// their memory goes (without that the PM4 engine polled the freed signal pool: SIGSEGV in most runs).
TEST(CApiCloseTest, ClosingADeviceWhoseQueuesStillWaitIsSafe) {
  for (int run = 0; run < 5; ++run) {
    ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:capi-close").ok());
    hcq_device* dev = nullptr;
    ASSERT_EQ(hcq_device_open("sim:navi31:capi-close", &dev), HCQ_OK) << hcq_last_error();
    hcq_signal* never = nullptr;
    hcq_signal* done = nullptr;
    ASSERT_EQ(hcq_signal_new(dev, 0, &never), HCQ_OK);
    ASSERT_EQ(hcq_signal_new(dev, 0, &done), HCQ_OK);
    hcq_queue* compute = nullptr;
    hcq_queue* copy = nullptr;
    ASSERT_EQ(hcq_queue_new_compute(dev, &compute), HCQ_OK);
    ASSERT_EQ(hcq_queue_new_copy(dev, &copy), HCQ_OK);
    for (hcq_queue* q : {compute, copy}) {
      hcq_queue_wait(q, never, 1);
      hcq_queue_signal(q, done, 1);
      ASSERT_EQ(hcq_queue_submit(q, nullptr, 0), HCQ_OK) << hcq_last_error();
    }
    hcq_device_close(dev);  // the queues are still waiting
    EXPECT_EQ(hcq_signal_value(done), 0u);
    EXPECT_EQ(hcq_queue_submit(compute, nullptr, 0), HCQ_ERROR_FAILED_PRECONDITION);
    hcq_queue_free(compute);
    hcq_queue_free(copy);
    hcq_signal_free(never);
    hcq_signal_free(done);
  }
  // The next open finds the device usable (the engines were stopped cleanly and come back on the partial boot).
  hcq_device* dev = nullptr;
  ASSERT_EQ(hcq_device_open("sim:navi31:capi-close", &dev), HCQ_OK) << hcq_last_error();
  hcq_signal* signal = nullptr;
  hcq_queue* queue = nullptr;
  ASSERT_EQ(hcq_signal_new(dev, 0, &signal), HCQ_OK);
  ASSERT_EQ(hcq_queue_new_compute(dev, &queue), HCQ_OK);
  hcq_queue_signal(queue, signal, 3);
  ASSERT_EQ(hcq_queue_submit(queue, nullptr, 0), HCQ_OK) << hcq_last_error();
  EXPECT_EQ(hcq_signal_wait(signal, 3, 5000), HCQ_OK) << hcq_last_error();
  hcq_queue_free(queue);
  hcq_signal_free(signal);
  hcq_device_close(dev);
}

// Issue 19, defect 4: the device may be closed before its objects; they then only release their handles, and
// calls that need the device fail with FAILED_PRECONDITION.
TEST(CApiCloseTest, ClosingTheDeviceBeforeItsObjectsIsSafe) {
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:capi-order").ok());
  hcq_device* dev = nullptr;
  ASSERT_EQ(hcq_device_open("sim:navi31:capi-order", &dev), HCQ_OK) << hcq_last_error();
  hcq_buffer* vram = nullptr;
  hcq_buffer* host = nullptr;
  hcq_signal* signal = nullptr;
  hcq_queue* queue = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev, 4096, 0, &vram), HCQ_OK);
  ASSERT_EQ(hcq_buffer_alloc(dev, 4096, 1, &host), HCQ_OK);
  ASSERT_EQ(hcq_signal_new(dev, 0, &signal), HCQ_OK);
  ASSERT_EQ(hcq_queue_new_compute(dev, &queue), HCQ_OK);
  hcq_queue_signal(queue, signal, 1);
  ASSERT_EQ(hcq_queue_bind(queue), HCQ_OK) << hcq_last_error();  // a bound queue owns device memory too
  hcq_device_close(dev);
  const char data[4] = {1, 2, 3, 4};
  EXPECT_EQ(hcq_buffer_copyin(vram, data, sizeof(data)), HCQ_ERROR_FAILED_PRECONDITION);
  EXPECT_NE(std::string(hcq_last_error()).find("closed"), std::string::npos) << hcq_last_error();
  EXPECT_EQ(hcq_buffer_cpu(host), nullptr);
  EXPECT_EQ(hcq_signal_wait(signal, 1, 10), HCQ_ERROR_FAILED_PRECONDITION);
  hcq_buffer_free(vram);
  hcq_buffer_free(host);
  hcq_signal_free(signal);
  hcq_queue_free(queue);
}

// Issue 19, defect 4: NULL elements of argument arrays are errors, not crashes.
TEST_F(CApiTest, NullBufferElementsAreErrors) {
  const char* build = std::getenv("BAREGPU_BUILD_ROOT");
  std::ifstream file(std::string(build ? build : ".") + "/tests/am/sim/isa/kernels/vector_add-O2.co", std::ios::binary);
  const std::vector<char> code{std::istreambuf_iterator<char>(file), {}};
  if (code.empty()) GTEST_SKIP() << "vector_add-O2.co is not built";
  hcq_program* program = nullptr;
  ASSERT_EQ(hcq_program_load(dev_, code.data(), code.size(), "vector_add", &program), HCQ_OK) << hcq_last_error();
  hcq_buffer* buffer = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, 4096, 0, &buffer), HCQ_OK);
  hcq_buffer* const buffers[] = {buffer, nullptr, buffer};
  const uint32_t n = 16, groups[3] = {1, 1, 1}, size[3] = {16, 1, 1};
  EXPECT_EQ(hcq_program_run(program, buffers, 3, &n, 1, groups, size, 1, nullptr), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hcq_last_error()).find("buffers[1] is NULL"), std::string::npos) << hcq_last_error();
  hcq_queue* queue = nullptr;
  ASSERT_EQ(hcq_queue_new_compute(dev_, &queue), HCQ_OK);
  hcq_queue_exec(queue, program, buffers, 3, &n, 1, groups, size);
  EXPECT_EQ(hcq_queue_submit(queue, nullptr, 0), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hcq_last_error()).find("buffers[1] is NULL"), std::string::npos) << hcq_last_error();
  hcq_queue_free(queue);
  hcq_buffer_free(buffer);
  hcq_program_free(program);
}

// Issue 19, defect 4: the device is safe to use from several threads (hcq.h says which calls): buffers, signals and
// queue submits from four threads at once.
TEST_F(CApiTest, SeveralThreadsShareADevice) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        hcq_buffer* buffer = nullptr;
        hcq_signal* signal = nullptr;
        hcq_queue* queue = nullptr;
        if (hcq_buffer_alloc(dev_, 8192, 0, &buffer) != HCQ_OK || hcq_signal_new(dev_, 0, &signal) != HCQ_OK ||
            hcq_queue_new_compute(dev_, &queue) != HCQ_OK) {
          ++failures;
          return;
        }
        uint32_t in[64], out[64] = {};
        for (uint32_t k = 0; k < 64; ++k) in[k] = static_cast<uint32_t>(t * 1000 + i * 64 + k);
        hcq_queue_signal(queue, signal, static_cast<uint64_t>(i + 1));
        if (hcq_buffer_copyin(buffer, in, sizeof(in)) != HCQ_OK || hcq_queue_submit(queue, nullptr, 0) != HCQ_OK ||
            hcq_signal_wait(signal, static_cast<uint64_t>(i + 1), 10000) != HCQ_OK ||
            hcq_buffer_copyout(out, buffer, sizeof(out)) != HCQ_OK || std::memcmp(in, out, sizeof(in)) != 0) {
          ++failures;
        }
        hcq_queue_free(queue);
        hcq_signal_free(signal);
        hcq_buffer_free(buffer);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0) << hcq_last_error();
}

// ---- API 1.1 (issue 18) ----

// A corpus code object (tests/am/sim/isa/kernels), empty when it is not built.
std::vector<char> ReadCodeObject(const std::string& stem) {
  const char* build = std::getenv("BAREGPU_BUILD_ROOT");
  std::ifstream file(std::string(build ? build : ".") + "/tests/am/sim/isa/kernels/" + stem + ".co", std::ios::binary);
  return {std::istreambuf_iterator<char>(file), {}};
}

// Polls a 32-bit word the GPU writes until it is at least `value`; false after `timeout` (the test fails, not hangs).
bool WaitForWord(const void* at, uint32_t value, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  std::atomic_ref<uint32_t> word(*static_cast<uint32_t*>(const_cast<void*>(at)));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (word.load(std::memory_order_acquire) < value) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return true;
}

void StoreWord(void* at, uint32_t value) {
  std::atomic_ref<uint32_t>(*static_cast<uint32_t*>(at)).store(value, std::memory_order_release);
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

uint8_t* Bytes(hcq_buffer* buffer) { return static_cast<uint8_t*>(hcq_buffer_cpu(buffer)); }

TEST(CApiVersionTest, TheLibraryIsTheHeadersVersion) {
  EXPECT_EQ(hcq_api_version(), static_cast<uint32_t>(HCQ_API_VERSION));
  EXPECT_EQ(hcq_api_version() >> 16, 1u);
  EXPECT_EQ(hcq_api_version() & 0xffff, 3u);  // 1.3: HCQ_ERROR_DEVICE_FAULT
}

// amdgpu's IP_VERSION packing, as hcq.h documents it.
constexpr uint32_t IpVersion(uint32_t major, uint32_t minor, uint32_t revision) {
  return (major << 16) | (minor << 8) | revision;
}

// The expected values come from the virtual Navi31's own configuration (its discovery table's sources) and from
// Linux's IP versions of Navi31, not from the code under test.
TEST_F(CApiTest, PropertiesAreWhatTheVirtualNavi31Is) {
  hcq_device_properties p{};
  p.struct_size = sizeof(p);
  ASSERT_EQ(hcq_device_get_properties(dev_, &p), HCQ_OK) << hcq_last_error();
  const am::sim::Navi31GcConfig gc;
  const am::sim::Navi31Config board = am::sim::Navi31Config::FromEnvironment();
  EXPECT_STREQ(p.name, "sim:navi31:capi");
  EXPECT_STREQ(p.arch, "gfx1100");
  EXPECT_EQ(p.gfx_target_version, 110000u);
  EXPECT_EQ(p.shader_engines, gc.num_se);
  EXPECT_EQ(p.shader_arrays_per_engine, gc.num_sa_per_se);
  EXPECT_EQ(p.compute_units, 96u);  // an RX 7900 XTX (discovery_table.h cites LACT#533)
  EXPECT_EQ(p.compute_units, gc.num_se * gc.num_sa_per_se * 2 * (gc.num_wgp0_per_sa + gc.num_wgp1_per_sa));
  EXPECT_EQ(p.simds_per_cu, 2u);  // RDNA: two SIMD32 per CU
  EXPECT_EQ(p.wave_size, 32u);
  EXPECT_EQ(p.max_waves_per_simd, gc.max_waves_per_simd);
  EXPECT_EQ(p.lds_bytes, gc.lds_size_kib * 1024);
  EXPECT_EQ(p.vram_bytes, board.vram_size);
  EXPECT_EQ(p.visible_vram_bytes, std::min(board.vram_size, board.bar0_size));
  // Navi31's blocks (Linux amdgpu_discovery.c for GC 11.0.0: SDMA 6.0.0, MMHUB 3.0.0, MP0/MP1 13.0.0, NBIO 4.3.0,
  // OSSSYS (IH) 6.0.0, HDP 6.0.0).
  EXPECT_EQ(p.gc_version, IpVersion(11, 0, 0));
  EXPECT_EQ(p.sdma_version, IpVersion(6, 0, 0));
  EXPECT_EQ(p.mmhub_version, IpVersion(3, 0, 0));
  EXPECT_EQ(p.mp0_version, IpVersion(13, 0, 0));
  EXPECT_EQ(p.mp1_version, IpVersion(13, 0, 0));
  EXPECT_EQ(p.nbio_version, IpVersion(4, 3, 0));
  EXPECT_EQ(p.ih_version, IpVersion(6, 0, 0));
  EXPECT_EQ(p.hdp_version, IpVersion(6, 0, 0));

  // A caller built against a later minor has a larger struct: only this API's part is written.
  struct Larger {
    hcq_device_properties base;
    uint32_t newer_field;
  } larger{};
  larger.base.struct_size = sizeof(larger);
  larger.newer_field = 0xabcd;
  ASSERT_EQ(hcq_device_get_properties(dev_, &larger.base), HCQ_OK) << hcq_last_error();
  EXPECT_EQ(larger.base.compute_units, p.compute_units);
  EXPECT_EQ(larger.newer_field, 0xabcdu);

  hcq_device_properties small{};
  small.struct_size = sizeof(small) - 4;
  EXPECT_EQ(hcq_device_get_properties(dev_, &small), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(hcq_last_error(), "struct_size is " + std::to_string(sizeof(small) - 4))) << hcq_last_error();
  EXPECT_EQ(small.compute_units, 0u);
  EXPECT_EQ(hcq_device_get_properties(dev_, nullptr), HCQ_ERROR_INVALID_ARGUMENT);
}

TEST(CApiOpenTest, UnknownOpenFlagsAreRefusedByName) {
  hcq_device* dev = nullptr;
  EXPECT_EQ(hcq_device_open_flags("sim:navi31:capi-flags", HCQ_DEVICE_PROFILE | 0x80u, &dev),
            HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(dev, nullptr);
  EXPECT_TRUE(Contains(hcq_last_error(), "unknown flag bits 0x80")) << hcq_last_error();
}

// With HCQ_DEVICE_PROFILE every copy is bracketed by timestamps; after a synchronize the span is in the JSON.
TEST(CApiOpenTest, AProfilingDeviceGivesChromeTraceJson) {
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:capi-profile").ok());
  hcq_device* dev = nullptr;
  ASSERT_EQ(hcq_device_open_flags("sim:navi31:capi-profile", HCQ_DEVICE_PROFILE, &dev), HCQ_OK) << hcq_last_error();
  size_t length = 0;
  char empty[256];
  ASSERT_EQ(hcq_device_profile_json(dev, empty, sizeof(empty), &length), HCQ_OK) << hcq_last_error();
  EXPECT_EQ(std::strlen(empty), length);
  EXPECT_FALSE(Contains(empty, "\"ph\":\"X\"")) << empty;  // no span yet

  hcq_buffer *a = nullptr, *b = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev, 4096, 0, &a), HCQ_OK);
  ASSERT_EQ(hcq_buffer_alloc(dev, 4096, 0, &b), HCQ_OK);
  hcq_queue* copy = nullptr;
  ASSERT_EQ(hcq_queue_new_copy(dev, &copy), HCQ_OK);
  hcq_signal* timeline = hcq_device_timeline_signal(dev);
  hcq_queue_wait(copy, timeline, hcq_device_timeline_value(dev) - 1);
  hcq_queue_copy(copy, hcq_buffer_address(b), hcq_buffer_address(a), 4096);
  hcq_queue_signal(copy, timeline, hcq_device_next_timeline(dev));
  ASSERT_EQ(hcq_queue_submit(copy, nullptr, 0), HCQ_OK) << hcq_last_error();
  ASSERT_EQ(hcq_device_synchronize(dev), HCQ_OK) << hcq_last_error();

  // Too small: the length still comes back.
  char tiny[8] = "unset";
  EXPECT_EQ(hcq_device_profile_json(dev, tiny, sizeof(tiny), &length), HCQ_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_GT(length, sizeof(tiny));
  EXPECT_TRUE(Contains(hcq_last_error(), std::to_string(length))) << hcq_last_error();
  EXPECT_EQ(hcq_device_profile_json(dev, nullptr, 0, &length), HCQ_ERROR_RESOURCE_EXHAUSTED);
  std::string json(length + 1, '\0');
  size_t again = 0;
  ASSERT_EQ(hcq_device_profile_json(dev, json.data(), json.size(), &again), HCQ_OK) << hcq_last_error();
  EXPECT_EQ(again, length);
  json.resize(length);
  EXPECT_TRUE(Contains(json, "\"traceEvents\"")) << json;
  EXPECT_TRUE(Contains(json, "\"ph\":\"X\",\"name\":\"copy 4096 bytes\"")) << json;
  // Exactly fitting (length + NUL) is enough; one byte less is not.
  EXPECT_EQ(hcq_device_profile_json(dev, json.data(), length, &again), HCQ_ERROR_RESOURCE_EXHAUSTED);

  hcq_queue_free(copy);
  hcq_buffer_free(a);
  hcq_buffer_free(b);
  hcq_device_close(dev);
}

TEST_F(CApiTest, ADeviceOpenedWithoutProfilingHasNoSpans) {
  size_t length = 0;
  char json[512];
  ASSERT_EQ(hcq_device_profile_json(dev_, json, sizeof(json), &length), HCQ_OK) << hcq_last_error();
  EXPECT_TRUE(Contains(json, "\"traceEvents\":[")) << json;
  EXPECT_FALSE(Contains(json, "\"ph\":\"X\"")) << json;
}

// A view is its own handle over part of a buffer: its address, size, CPU view and copies reach those bytes.
TEST_F(CApiTest, ABufferViewReachesItsPartOfTheBuffer) {
  constexpr uint64_t kSize = 64 << 10, kOffset = 4096, kViewSize = 8192, kInner = 100;
  for (int host : {0, 1}) {
    hcq_buffer* base = nullptr;
    ASSERT_EQ(hcq_buffer_alloc(dev_, kSize, host, &base), HCQ_OK) << hcq_last_error();
    std::vector<uint8_t> zeros(kSize, 0);
    ASSERT_EQ(hcq_buffer_copyin(base, zeros.data(), zeros.size()), HCQ_OK) << hcq_last_error();
    hcq_buffer* view = nullptr;
    ASSERT_EQ(hcq_buffer_view(base, kOffset, kViewSize, &view), HCQ_OK) << hcq_last_error();
    EXPECT_EQ(hcq_buffer_address(view), hcq_buffer_address(base) + kOffset);
    EXPECT_EQ(hcq_buffer_size(view), kViewSize);
    EXPECT_EQ(Bytes(view), Bytes(base) + kOffset);

    std::vector<uint8_t> data(kViewSize);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 13 + host);
    ASSERT_EQ(hcq_buffer_copyin(view, data.data(), data.size()), HCQ_OK) << hcq_last_error();
    std::vector<uint8_t> whole(kSize);
    ASSERT_EQ(hcq_buffer_copyout(whole.data(), base, whole.size()), HCQ_OK) << hcq_last_error();
    EXPECT_EQ(std::vector<uint8_t>(whole.begin() + kOffset, whole.begin() + kOffset + kViewSize), data);
    EXPECT_EQ(whole[kOffset - 1], 0);
    EXPECT_EQ(whole[kOffset + kViewSize], 0);
    // More than the view holds is refused (the bytes after it belong to the base only).
    std::vector<uint8_t> too_much(kViewSize + 1);
    EXPECT_EQ(hcq_buffer_copyin(view, too_much.data(), too_much.size()), HCQ_ERROR_INVALID_ARGUMENT);

    // A view of a view.
    hcq_buffer* inner = nullptr;
    ASSERT_EQ(hcq_buffer_view(view, kInner, 16, &inner), HCQ_OK) << hcq_last_error();
    EXPECT_EQ(hcq_buffer_address(inner), hcq_buffer_address(base) + kOffset + kInner);
    uint8_t back[16];
    ASSERT_EQ(hcq_buffer_copyout(back, inner, sizeof(back)), HCQ_OK) << hcq_last_error();
    EXPECT_EQ(std::memcmp(back, data.data() + kInner, sizeof(back)), 0);

    hcq_buffer_free(inner);
    hcq_buffer_free(view);
    hcq_buffer_free(base);
  }
}

TEST_F(CApiTest, ViewsOutOfRangeAreRefusedWithTheNumbers) {
  hcq_buffer* base = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, 4096, 1, &base), HCQ_OK);
  hcq_buffer* view = nullptr;
  EXPECT_EQ(hcq_buffer_view(base, 4000, 97, &view), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(hcq_last_error(), "[4000, 4000 + 97)")) << hcq_last_error();
  EXPECT_TRUE(Contains(hcq_last_error(), "4096-byte")) << hcq_last_error();
  EXPECT_EQ(hcq_buffer_view(base, 4097, 1, &view), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hcq_buffer_view(base, 16, UINT64_MAX, &view), HCQ_ERROR_INVALID_ARGUMENT);  // offset + size overflows
  EXPECT_EQ(hcq_buffer_view(base, UINT64_MAX, 2, &view), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hcq_buffer_view(base, 0, 0, &view), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(hcq_last_error(), "empty")) << hcq_last_error();
  EXPECT_EQ(view, nullptr);
  ASSERT_EQ(hcq_buffer_view(base, 4095, 1, &view), HCQ_OK) << hcq_last_error();  // the last byte
  hcq_buffer* beyond = nullptr;
  EXPECT_EQ(hcq_buffer_view(view, 0, 2, &beyond), HCQ_ERROR_INVALID_ARGUMENT);  // a view's own bounds
  EXPECT_EQ(hcq_buffer_view(nullptr, 0, 1, &beyond), HCQ_ERROR_INVALID_ARGUMENT);
  hcq_buffer_free(view);
  hcq_buffer_free(base);
}

// The memory lives while any handle does: the base freed first leaves the view working (the GPU writes through it),
// and either order frees the memory once (the ASan build checks both).
TEST_F(CApiTest, TheBufferAndItsViewsMayBeFreedInAnyOrder) {
  for (bool base_first : {true, false}) {
    hcq_buffer *base = nullptr, *view = nullptr, *source = nullptr;
    ASSERT_EQ(hcq_buffer_alloc(dev_, 8192, 0, &base), HCQ_OK);
    ASSERT_EQ(hcq_buffer_alloc(dev_, 4096, 1, &source), HCQ_OK);
    ASSERT_EQ(hcq_buffer_view(base, 4096, 4096, &view), HCQ_OK) << hcq_last_error();
    std::memset(Bytes(source), base_first ? 0x5a : 0xa5, 4096);
    if (base_first) hcq_buffer_free(base);
    hcq_queue* copy = nullptr;
    ASSERT_EQ(hcq_queue_new_copy(dev_, &copy), HCQ_OK);
    hcq_signal* timeline = hcq_device_timeline_signal(dev_);
    hcq_queue_wait(copy, timeline, hcq_device_timeline_value(dev_) - 1);
    hcq_queue_copy(copy, hcq_buffer_address(view), hcq_buffer_address(source), 4096);
    hcq_queue_signal(copy, timeline, hcq_device_next_timeline(dev_));
    ASSERT_EQ(hcq_queue_submit(copy, nullptr, 0), HCQ_OK) << hcq_last_error();
    ASSERT_EQ(hcq_device_synchronize(dev_), HCQ_OK) << hcq_last_error();
    std::vector<uint8_t> back(4096);
    ASSERT_EQ(hcq_buffer_copyout(back.data(), view, back.size()), HCQ_OK) << hcq_last_error();
    EXPECT_EQ(back, std::vector<uint8_t>(4096, base_first ? 0x5a : 0xa5));
    hcq_buffer_free(view);
    if (!base_first) hcq_buffer_free(base);
    hcq_queue_free(copy);
    hcq_buffer_free(source);
  }
}

// Mapping a view into a peer maps its allocation: the peer reaches the view's bytes at the view's address.
TEST_F(CApiTest, MappingAViewMapsItsAllocation) {
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:capi-view-peer").ok());
  hcq_device* peer = nullptr;
  ASSERT_EQ(hcq_device_open("sim:navi31:capi-view-peer", &peer), HCQ_OK) << hcq_last_error();
  constexpr uint64_t kOffset = 4096, kBytes = 256;
  hcq_buffer *source = nullptr, *view = nullptr, *destination = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, 2 * kOffset, 1, &source), HCQ_OK);
  for (uint64_t i = 0; i < 2 * kOffset; ++i) Bytes(source)[i] = static_cast<uint8_t>(i * 5 + 2);
  ASSERT_EQ(hcq_buffer_view(source, kOffset, kBytes, &view), HCQ_OK) << hcq_last_error();
  ASSERT_EQ(hcq_buffer_alloc(peer, kBytes, 1, &destination), HCQ_OK);
  std::memset(Bytes(destination), 0, kBytes);
  ASSERT_EQ(hcq_buffer_map(peer, view), HCQ_OK) << hcq_last_error();
  hcq_signal* done = nullptr;
  ASSERT_EQ(hcq_signal_new(peer, 0, &done), HCQ_OK);
  hcq_queue* copy = nullptr;
  ASSERT_EQ(hcq_queue_new_copy(peer, &copy), HCQ_OK);
  hcq_queue_copy(copy, hcq_buffer_address(destination), hcq_buffer_address(view), kBytes);
  hcq_queue_signal(copy, done, 1);
  ASSERT_EQ(hcq_queue_submit(copy, nullptr, 0), HCQ_OK) << hcq_last_error();
  ASSERT_EQ(hcq_signal_wait(done, 1, 10000), HCQ_OK) << hcq_last_error();
  EXPECT_EQ(std::memcmp(Bytes(destination), Bytes(source) + kOffset, kBytes), 0);
  hcq_queue_free(copy);
  hcq_signal_free(done);
  hcq_buffer_free(destination);
  hcq_buffer_free(view);
  hcq_buffer_free(source);
  hcq_device_close(peer);
}

// 16-byte signal slots the caller lays out in its own host buffer: the value at +0, the timestamp at +8.
TEST_F(CApiTest, QueuesWaitAndSignalAtCallerLaidOutSlots) {
  hcq_buffer* slots = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, 4096, 1, &slots), HCQ_OK);
  std::memset(Bytes(slots), 0, 4096);
  const uint64_t base = hcq_buffer_address(slots);
  for (int compute : {1, 0}) {
    const uint64_t gate = compute ? 64 : 128, done = gate + 16;
    hcq_queue* queue = nullptr;
    ASSERT_EQ(compute ? hcq_queue_new_compute(dev_, &queue) : hcq_queue_new_copy(dev_, &queue), HCQ_OK);
    hcq_queue_wait_at(queue, hcq_constant(base + gate), hcq_constant(5));
    hcq_queue_signal_at(queue, hcq_constant(base + done), hcq_constant(7));
    ASSERT_EQ(hcq_queue_submit(queue, nullptr, 0), HCQ_OK) << hcq_last_error();
    StoreWord(Bytes(slots) + gate, 4);  // not yet
    EXPECT_FALSE(WaitForWord(Bytes(slots) + done, 7, std::chrono::milliseconds(50)));
    StoreWord(Bytes(slots) + gate, 5);
    EXPECT_TRUE(WaitForWord(Bytes(slots) + done, 7)) << (compute ? "compute" : "copy");
    hcq_queue_free(queue);
  }
  hcq_buffer_free(slots);
}

// As a graph replays a bound queue: the signal's ADDRESS is a variable (with an addend), so is the wait's value;
// two submits signal two different slots.
TEST_F(CApiTest, ABoundQueueSignalsAVariableAddress) {
  hcq_buffer* slots = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, 4096, 1, &slots), HCQ_OK);
  std::memset(Bytes(slots), 0, 4096);
  const uint64_t base = hcq_buffer_address(slots);
  constexpr uint64_t kGate = 0, kSlotValueOffset = 16;
  for (int compute : {1, 0}) {
    hcq_queue* queue = nullptr;
    ASSERT_EQ(compute ? hcq_queue_new_compute(dev_, &queue) : hcq_queue_new_copy(dev_, &queue), HCQ_OK);
    hcq_value address = hcq_variable(0);
    address.value = kSlotValueOffset;  // variable 0 + 16
    hcq_queue_wait_at(queue, hcq_constant(base + kGate), hcq_variable(1));
    hcq_queue_signal_at(queue, address, hcq_constant(9));
    ASSERT_EQ(hcq_queue_bind(queue), HCQ_OK) << hcq_last_error();
    for (uint64_t round = 1; round <= 2; ++round) {
      const uint64_t slot = 256 * round + 512 * static_cast<uint64_t>(compute);
      const uint64_t gate_value = 10 * static_cast<uint64_t>(compute) + round;
      const uint64_t values[2] = {base + slot, gate_value};
      ASSERT_EQ(hcq_queue_submit(queue, values, 2), HCQ_OK) << hcq_last_error();
      StoreWord(Bytes(slots) + kGate, static_cast<uint32_t>(gate_value));
      EXPECT_TRUE(WaitForWord(Bytes(slots) + slot + kSlotValueOffset, 9)) << "round " << round;
    }
    // Each round wrote its own slot, nothing else.
    for (uint64_t round = 1; round <= 2; ++round) {
      const uint64_t slot = 256 * round + 512 * static_cast<uint64_t>(compute);
      EXPECT_EQ(Bytes(slots)[slot], 0);
      EXPECT_EQ(Bytes(slots)[slot + kSlotValueOffset], 9);
    }
    // A value that misaligns the address fails the submit, naming it.
    const uint64_t misaligned[2] = {base + 2, 0};
    EXPECT_EQ(hcq_queue_submit(queue, misaligned, 2), HCQ_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(Contains(hcq_last_error(), "not 4-byte aligned")) << hcq_last_error();
    hcq_queue_free(queue);
  }
  hcq_buffer_free(slots);
}

TEST_F(CApiTest, TimestampAtWritesTheClock) {
  hcq_buffer* slots = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, 4096, 1, &slots), HCQ_OK);
  std::memset(Bytes(slots), 0, 4096);
  const uint64_t base = hcq_buffer_address(slots);
  for (int compute : {1, 0}) {
    const uint64_t slot = compute ? 0 : 64;
    hcq_queue* queue = nullptr;
    ASSERT_EQ(compute ? hcq_queue_new_compute(dev_, &queue) : hcq_queue_new_copy(dev_, &queue), HCQ_OK);
    hcq_queue_timestamp_at(queue, hcq_constant(base + slot + 8));
    hcq_queue_signal_at(queue, hcq_constant(base + slot), hcq_constant(1));
    ASSERT_EQ(hcq_queue_submit(queue, nullptr, 0), HCQ_OK) << hcq_last_error();
    ASSERT_TRUE(WaitForWord(Bytes(slots) + slot, 1));
    uint64_t ticks = 0;
    std::memcpy(&ticks, Bytes(slots) + slot + 8, sizeof(ticks));
    EXPECT_NE(ticks, 0u) << (compute ? "compute" : "copy");
    hcq_queue_free(queue);
  }
  hcq_buffer_free(slots);
}

TEST_F(CApiTest, MisalignedConstantAddressesFailTheSubmit) {
  hcq_buffer* slots = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, 4096, 1, &slots), HCQ_OK);
  const uint64_t base = hcq_buffer_address(slots);
  hcq_queue* queue = nullptr;
  ASSERT_EQ(hcq_queue_new_compute(dev_, &queue), HCQ_OK);
  hcq_queue_signal_at(queue, hcq_constant(base + 2), hcq_constant(1));
  EXPECT_EQ(hcq_queue_bind(queue), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(hcq_last_error(), "must be 4-byte aligned")) << hcq_last_error();
  hcq_queue_reset(queue);
  hcq_queue_wait_at(queue, hcq_constant(base + 1), hcq_constant(1));
  EXPECT_EQ(hcq_queue_submit(queue, nullptr, 0), HCQ_ERROR_INVALID_ARGUMENT);
  hcq_queue_reset(queue);
  hcq_queue_timestamp_at(queue, hcq_constant(base + 4));  // 4-byte aligned is not enough for 64 bits
  EXPECT_EQ(hcq_queue_submit(queue, nullptr, 0), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(hcq_last_error(), "must be 8-byte aligned")) << hcq_last_error();
  hcq_queue_reset(queue);
  hcq_queue_signal_at(queue, hcq_constant(base), hcq_constant(uint64_t{1} << 32));  // values are 32 bits
  EXPECT_EQ(hcq_queue_submit(queue, nullptr, 0), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(hcq_last_error(), "32 bits")) << hcq_last_error();
  hcq_queue_reset(queue);
  hcq_queue_copy_at(queue, hcq_constant(base), hcq_constant(base + 64), 16);  // a copy queue's command
  EXPECT_EQ(hcq_queue_submit(queue, nullptr, 0), HCQ_ERROR_INVALID_ARGUMENT);
  hcq_queue_free(queue);
  hcq_buffer_free(slots);
}

// Both addresses variables with addends; a second submit copies between other buffers.
TEST_F(CApiTest, CopyAtTakesVariableAddressesWithAddends) {
  constexpr uint64_t kBytes = 4096, kFrom = 128, kTo = 256;
  hcq_buffer *source = nullptr, *first = nullptr, *second = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, kFrom + kBytes, 1, &source), HCQ_OK);
  ASSERT_EQ(hcq_buffer_alloc(dev_, kTo + kBytes, 1, &first), HCQ_OK);
  ASSERT_EQ(hcq_buffer_alloc(dev_, kTo + kBytes, 1, &second), HCQ_OK);
  for (uint64_t i = 0; i < kFrom + kBytes; ++i) Bytes(source)[i] = static_cast<uint8_t>(i * 7 + 1);
  std::memset(Bytes(first), 0, kTo + kBytes);
  std::memset(Bytes(second), 0, kTo + kBytes);
  hcq_signal* done = nullptr;
  ASSERT_EQ(hcq_signal_new(dev_, 0, &done), HCQ_OK);
  hcq_queue* copy = nullptr;
  ASSERT_EQ(hcq_queue_new_copy(dev_, &copy), HCQ_OK);
  hcq_value to = hcq_variable(0), from = hcq_variable(1);
  to.value = kTo;
  from.value = kFrom;
  hcq_queue_copy_at(copy, to, from, kBytes);
  hcq_queue_signal_var(copy, done, 2);
  ASSERT_EQ(hcq_queue_bind(copy), HCQ_OK) << hcq_last_error();
  hcq_buffer* targets[2] = {first, second};
  for (uint64_t round = 1; round <= 2; ++round) {
    const uint64_t values[3] = {hcq_buffer_address(targets[round - 1]), hcq_buffer_address(source), round};
    ASSERT_EQ(hcq_queue_submit(copy, values, 3), HCQ_OK) << hcq_last_error();
    ASSERT_EQ(hcq_signal_wait(done, round, 10000), HCQ_OK) << hcq_last_error();
    EXPECT_EQ(std::memcmp(Bytes(targets[round - 1]) + kTo, Bytes(source) + kFrom, kBytes), 0) << "round " << round;
    EXPECT_EQ(Bytes(targets[round - 1])[kTo - 1], 0);
  }
  hcq_queue_free(copy);
  hcq_signal_free(done);
  hcq_buffer_free(source);
  hcq_buffer_free(first);
  hcq_buffer_free(second);
}

// vector_add(a, b, c, n) as its source (tests/am/sim/isa/kernels/vector_add.cl) declares it: three pointers and a
// uint, with reqd_work_group_size(64, 1, 1).
TEST_F(CApiTest, ProgramsDescribeTheirArgumentsAndWorkgroupSize) {
  const std::vector<char> code = ReadCodeObject("vector_add-O2");
  if (code.empty()) GTEST_SKIP() << "vector_add-O2.co is not built";
  hcq_program* program = nullptr;
  ASSERT_EQ(hcq_program_load(dev_, code.data(), code.size(), "vector_add", &program), HCQ_OK) << hcq_last_error();
  uint32_t offsets[8] = {}, sizes[8] = {};
  size_t count = 0;
  ASSERT_EQ(hcq_program_arguments(program, offsets, sizes, 8, &count), HCQ_OK) << hcq_last_error();
  ASSERT_EQ(count, 4u);
  EXPECT_EQ(std::vector<uint32_t>(offsets, offsets + 4), (std::vector<uint32_t>{0, 8, 16, 24}));
  EXPECT_EQ(std::vector<uint32_t>(sizes, sizes + 4), (std::vector<uint32_t>{8, 8, 8, 4}));
  // A smaller capacity still gives the count.
  uint32_t one_offset = 99, one_size = 99;
  ASSERT_EQ(hcq_program_arguments(program, &one_offset, &one_size, 1, &count), HCQ_OK);
  EXPECT_EQ(count, 4u);
  EXPECT_EQ(one_offset, 0u);
  EXPECT_EQ(one_size, 8u);
  ASSERT_EQ(hcq_program_arguments(program, nullptr, nullptr, 0, &count), HCQ_OK);
  EXPECT_EQ(count, 4u);
  uint32_t local[3] = {};
  ASSERT_EQ(hcq_program_required_local(program, local), HCQ_OK);
  EXPECT_EQ(std::vector<uint32_t>(local, local + 3), (std::vector<uint32_t>{64, 1, 1}));
  EXPECT_GE(hcq_program_args_size(program), hcq_program_kernarg_size(program));
  hcq_program_free(program);

  // launch_dims has no reqd_work_group_size.
  const std::vector<char> dims = ReadCodeObject("launch_dims-O2");
  if (dims.empty()) GTEST_SKIP() << "launch_dims-O2.co is not built";
  ASSERT_EQ(hcq_program_load(dev_, dims.data(), dims.size(), "launch_dims", &program), HCQ_OK) << hcq_last_error();
  ASSERT_EQ(hcq_program_required_local(program, local), HCQ_OK);
  EXPECT_EQ(std::vector<uint32_t>(local, local + 3), (std::vector<uint32_t>{0, 0, 0}));
  ASSERT_EQ(hcq_program_arguments(program, offsets, sizes, 8, &count), HCQ_OK);
  EXPECT_EQ(count, 2u);  // out, salt
  hcq_program_free(program);
}

// Launches the metadata does not allow are refused, naming the kernel, what it expects and what was given.
TEST_F(CApiTest, ExecChecksArgumentsAndWorkgroupSizeAgainstTheMetadata) {
  const std::vector<char> code = ReadCodeObject("vector_add-O2");
  if (code.empty()) GTEST_SKIP() << "vector_add-O2.co is not built";
  hcq_program* program = nullptr;
  ASSERT_EQ(hcq_program_load(dev_, code.data(), code.size(), "vector_add", &program), HCQ_OK) << hcq_last_error();
  hcq_buffer* buffer = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, 4096, 0, &buffer), HCQ_OK);
  hcq_buffer* const buffers[] = {buffer, buffer, buffer};
  const uint32_t n = 16, groups[3] = {1, 1, 1}, right[3] = {64, 1, 1}, wrong[3] = {32, 1, 1};
  EXPECT_EQ(hcq_program_run(program, buffers, 3, &n, 1, groups, wrong, 1, nullptr), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(hcq_last_error(), "vector_add requires workgroups of 64 x 1 x 1")) << hcq_last_error();
  EXPECT_TRUE(Contains(hcq_last_error(), "given 32 x 1 x 1")) << hcq_last_error();
  EXPECT_EQ(hcq_program_run(program, buffers, 3, nullptr, 0, groups, right, 1, nullptr), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(hcq_last_error(), "vector_add takes 4 explicit arguments")) << hcq_last_error();
  EXPECT_TRUE(Contains(hcq_last_error(), "given 3 buffers and 0 values")) << hcq_last_error();
  // Four arguments, but the last pointer given as a value: the layout differs.
  const uint32_t two[2] = {0, 16};
  EXPECT_EQ(hcq_program_run(program, buffers, 2, two, 2, groups, right, 1, nullptr), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(hcq_last_error(), "argument 2 is 8 bytes at offset 16")) << hcq_last_error();
  hcq_queue* queue = nullptr;
  ASSERT_EQ(hcq_queue_new_compute(dev_, &queue), HCQ_OK);
  hcq_queue_exec(queue, program, buffers, 3, &n, 1, groups, wrong);
  EXPECT_EQ(hcq_queue_submit(queue, nullptr, 0), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(hcq_last_error(), "requires workgroups of 64 x 1 x 1")) << hcq_last_error();
  hcq_queue_free(queue);
  hcq_buffer_free(buffer);
  hcq_program_free(program);
}

// exec_at: the caller writes vector_add's arguments itself (a, b, c, n at the offsets its metadata gives) and the
// queue adds the hidden ones; global sizes as constants and as a variable with an addend.
TEST_F(CApiTest, ExecAtRunsWithArgumentsTheCallerWrote) {
  const std::vector<char> code = ReadCodeObject("vector_add-O2");
  if (code.empty()) GTEST_SKIP() << "vector_add-O2.co is not built";
  hcq_program* program = nullptr;
  ASSERT_EQ(hcq_program_load(dev_, code.data(), code.size(), "vector_add", &program), HCQ_OK) << hcq_last_error();
  constexpr uint32_t kN = 256, kGroup = 64;
  std::vector<float> a(kN), b(kN), zero(kN, 0.0f);
  for (uint32_t i = 0; i < kN; ++i) a[i] = static_cast<float>(i), b[i] = static_cast<float>(1000 + 2 * i);
  hcq_buffer *da = nullptr, *db = nullptr, *dc = nullptr, *args = nullptr;
  for (hcq_buffer** d : {&da, &db, &dc}) ASSERT_EQ(hcq_buffer_alloc(dev_, kN * sizeof(float), 0, d), HCQ_OK);
  ASSERT_EQ(hcq_buffer_copyin(da, a.data(), kN * sizeof(float)), HCQ_OK);
  ASSERT_EQ(hcq_buffer_copyin(db, b.data(), kN * sizeof(float)), HCQ_OK);
  const uint64_t args_size = hcq_program_args_size(program);
  ASSERT_GT(args_size, 0u);
  const uint64_t second = (args_size + 255) / 256 * 256;  // the second launch's arguments, 16-byte aligned
  ASSERT_EQ(hcq_buffer_alloc(dev_, 2 * second, 1, &args), HCQ_OK);
  for (uint64_t at : {uint64_t{0}, second}) {
    uint8_t* p = Bytes(args) + at;
    const uint64_t pointers[3] = {hcq_buffer_address(da), hcq_buffer_address(db), hcq_buffer_address(dc)};
    std::memcpy(p, pointers, sizeof(pointers));
    std::memcpy(p + 24, &kN, sizeof(kN));
  }
  hcq_signal* timeline = hcq_device_timeline_signal(dev_);
  const hcq_value local[3] = {hcq_constant(kGroup), hcq_constant(1), hcq_constant(1)};

  // Constant dimensions.
  ASSERT_EQ(hcq_buffer_copyin(dc, zero.data(), kN * sizeof(float)), HCQ_OK);
  hcq_queue* queue = nullptr;
  ASSERT_EQ(hcq_queue_new_compute(dev_, &queue), HCQ_OK);
  const hcq_value groups[3] = {hcq_constant(kN / kGroup), hcq_constant(1), hcq_constant(1)};
  hcq_queue_wait(queue, timeline, hcq_device_timeline_value(dev_) - 1);
  hcq_queue_memory_barrier(queue);
  hcq_queue_exec_at(queue, program, args, 0, groups, local);
  hcq_queue_signal(queue, timeline, hcq_device_next_timeline(dev_));
  ASSERT_EQ(hcq_queue_submit(queue, nullptr, 0), HCQ_OK) << hcq_last_error();
  ASSERT_EQ(hcq_device_synchronize(dev_), HCQ_OK) << hcq_last_error();
  std::vector<float> c(kN);
  ASSERT_EQ(hcq_buffer_copyout(c.data(), dc, kN * sizeof(float)), HCQ_OK);
  for (uint32_t i = 0; i < kN; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "element " << i;

  // The workgroup count as variable 0 + 1, a bound queue submitted with 1 (2 groups) and 3 (4 groups).
  hcq_queue_reset(queue);
  hcq_value count = hcq_variable(0);
  count.value = 1;
  const hcq_value variable_groups[3] = {count, hcq_constant(1), hcq_constant(1)};
  hcq_queue_wait_var(queue, timeline, 1);
  hcq_queue_memory_barrier(queue);
  hcq_queue_exec_at(queue, program, args, second, variable_groups, local);
  hcq_queue_signal_var(queue, timeline, 2);
  ASSERT_EQ(hcq_queue_bind(queue), HCQ_OK) << hcq_last_error();
  for (uint64_t submitted_groups : {uint64_t{2}, uint64_t{4}}) {
    ASSERT_EQ(hcq_buffer_copyin(dc, zero.data(), kN * sizeof(float)), HCQ_OK);
    const uint64_t wait = hcq_device_timeline_value(dev_) - 1;
    const uint64_t values[3] = {submitted_groups - 1, wait, hcq_device_next_timeline(dev_)};
    ASSERT_EQ(hcq_queue_submit(queue, values, 3), HCQ_OK) << hcq_last_error();
    ASSERT_EQ(hcq_device_synchronize(dev_), HCQ_OK) << hcq_last_error();
    ASSERT_EQ(hcq_buffer_copyout(c.data(), dc, kN * sizeof(float)), HCQ_OK);
    const uint32_t ran = static_cast<uint32_t>(submitted_groups) * kGroup;
    for (uint32_t i = 0; i < kN; ++i) {
      ASSERT_EQ(c[i], i < ran ? a[i] + b[i] : 0.0f) << "element " << i << " with " << submitted_groups << " groups";
    }
  }
  hcq_queue_free(queue);

  // Refusals, each naming the numbers.
  auto refused = [&](uint64_t offset, const hcq_value* sizes, const std::string& message) {
    hcq_queue* q = nullptr;
    ASSERT_EQ(hcq_queue_new_compute(dev_, &q), HCQ_OK);
    hcq_queue_exec_at(q, program, args, offset, groups, sizes);
    EXPECT_EQ(hcq_queue_submit(q, nullptr, 0), HCQ_ERROR_INVALID_ARGUMENT) << message;
    EXPECT_TRUE(Contains(hcq_last_error(), message)) << hcq_last_error();
    hcq_queue_free(q);
  };
  refused(8, local, "args_offset 8 is not 16-byte aligned");
  refused(2 * second - 16, local,
          std::to_string(args_size) + " bytes of arguments at offset " + std::to_string(2 * second - 16) +
              " run past the " + std::to_string(2 * second) + "-byte argument buffer");
  const hcq_value wrong_local[3] = {hcq_constant(32), hcq_constant(1), hcq_constant(1)};
  refused(0, wrong_local, "vector_add requires workgroups of 64 x 1 x 1");
  hcq_queue* copy = nullptr;
  ASSERT_EQ(hcq_queue_new_copy(dev_, &copy), HCQ_OK);
  hcq_queue_exec_at(copy, program, args, 0, groups, local);
  EXPECT_EQ(hcq_queue_submit(copy, nullptr, 0), HCQ_ERROR_INVALID_ARGUMENT);
  hcq_queue_free(copy);

  for (hcq_buffer* d : {da, db, dc, args}) hcq_buffer_free(d);
  hcq_program_free(program);
}

}  // namespace

namespace {

// vector_add(a, b, c, n) over n floats; reads c back.
std::vector<float> ReadFloats(hcq_buffer* buffer, size_t n) {
  std::vector<float> out(n);
  EXPECT_EQ(hcq_buffer_copyout(out.data(), buffer, n * sizeof(float)), HCQ_OK) << hcq_last_error();
  return out;
}

}  // namespace

// A graph (hcq::Graph through the C API): a kernel whose element count and workgroup count are variables, then a
// copy of its output, replayed with other values.
TEST_F(CApiTest, AGraphReplaysKernelsAndCopiesWithNewValues) {
  const std::vector<char> code = ReadCodeObject("vector_add-O2");
  if (code.empty()) GTEST_SKIP() << "vector_add-O2.co is not built";
  hcq_program* program = nullptr;
  ASSERT_EQ(hcq_program_load(dev_, code.data(), code.size(), "vector_add", &program), HCQ_OK) << hcq_last_error();
  constexpr size_t kMax = 256;
  hcq_buffer* b[4] = {};
  for (hcq_buffer*& buffer : b) ASSERT_EQ(hcq_buffer_alloc(dev_, kMax * sizeof(float), 0, &buffer), HCQ_OK);
  std::vector<float> ones(kMax, 1.0f), twos(kMax, 2.0f), zeros(kMax, 0.0f);
  ASSERT_EQ(hcq_buffer_copyin(b[0], ones.data(), kMax * sizeof(float)), HCQ_OK);
  ASSERT_EQ(hcq_buffer_copyin(b[1], twos.data(), kMax * sizeof(float)), HCQ_OK);

  hcq_graph* graph = nullptr;
  ASSERT_EQ(hcq_graph_new(2, &graph), HCQ_OK);
  const hcq_value n = hcq_variable(0);
  const hcq_value global[3] = {hcq_variable(1), hcq_constant(1), hcq_constant(1)};
  const hcq_value local[3] = {hcq_constant(64), hcq_constant(1), hcq_constant(1)};
  hcq_graph_add_kernel(graph, program, b, 3, &n, 1, global, local);
  hcq_graph_add_copy(graph, dev_, hcq_buffer_address(b[3]), hcq_buffer_address(b[2]), kMax * sizeof(float));
  ASSERT_EQ(hcq_graph_finalize(graph), HCQ_OK) << hcq_last_error();
  for (uint64_t count : {64u, 200u}) {
    ASSERT_EQ(hcq_buffer_copyin(b[2], zeros.data(), kMax * sizeof(float)), HCQ_OK);
    const uint64_t values[2] = {count, (count + 63) / 64};
    ASSERT_EQ(hcq_graph_run(graph, values, 2), HCQ_OK) << hcq_last_error();
    ASSERT_EQ(hcq_graph_wait(graph), HCQ_OK) << hcq_last_error();
    const std::vector<float> copied = ReadFloats(b[3], kMax);
    for (size_t i = 0; i < kMax; ++i)
      ASSERT_EQ(copied[i], i < count ? 3.0f : 0.0f) << "element " << i << " of " << count;
  }
  EXPECT_NE(hcq_graph_run(graph, nullptr, 0), HCQ_OK);  // both variables missing
  hcq_graph_free(graph);
  for (hcq_buffer* buffer : b) hcq_buffer_free(buffer);
  hcq_program_free(program);
}

TEST_F(CApiTest, ABadGraphEntryFailsTheFinalize) {
  hcq_graph* graph = nullptr;
  ASSERT_EQ(hcq_graph_new(0, &graph), HCQ_OK);
  const hcq_value dims[3] = {hcq_constant(1), hcq_constant(1), hcq_constant(1)};
  hcq_graph_add_kernel(graph, nullptr, nullptr, 0, nullptr, 0, dims, dims);
  EXPECT_EQ(hcq_graph_finalize(graph), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(hcq_last_error(), "NULL program")) << hcq_last_error();
  hcq_graph_free(graph);
  EXPECT_EQ(hcq_graph_new(0, nullptr), HCQ_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hcq_graph_run(nullptr, nullptr, 0), HCQ_ERROR_INVALID_ARGUMENT);
}

TEST(CApiCloseTest, ClosingADeviceReleasesItsGraphs) {
  ASSERT_TRUE(pci::sim::PersistentState::PowerCycle("sim:navi31:capi-graph").ok());
  hcq_device* dev = nullptr;
  ASSERT_EQ(hcq_device_open("sim:navi31:capi-graph", &dev), HCQ_OK) << hcq_last_error();
  hcq_buffer* a = nullptr;
  hcq_buffer* c = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev, 4096, 0, &a), HCQ_OK);
  ASSERT_EQ(hcq_buffer_alloc(dev, 4096, 0, &c), HCQ_OK);
  hcq_graph* graph = nullptr;
  ASSERT_EQ(hcq_graph_new(0, &graph), HCQ_OK);
  hcq_graph_add_copy(graph, dev, hcq_buffer_address(c), hcq_buffer_address(a), 4096);
  ASSERT_EQ(hcq_graph_finalize(graph), HCQ_OK) << hcq_last_error();
  ASSERT_EQ(hcq_graph_run(graph, nullptr, 0), HCQ_OK) << hcq_last_error();
  hcq_device_close(dev);  // with the graph alive: its queues go first
  EXPECT_EQ(hcq_graph_run(graph, nullptr, 0), HCQ_ERROR_FAILED_PRECONDITION);
  EXPECT_EQ(hcq_graph_wait(graph), HCQ_ERROR_FAILED_PRECONDITION);
  hcq_graph_free(graph);
  hcq_buffer_free(a);
  hcq_buffer_free(c);
}

namespace {

// Issue 23, defect 4: launch dimensions the hardware cannot run are refused when the exec is recorded (the submit
// returns the error; nothing reaches the device), naming what is wrong. launch_dims has no reqd_work_group_size, so
// only the hardware's limits apply.
TEST_F(CApiTest, LaunchDimensionsTheHardwareCannotRunAreRefused) {
  const std::vector<char> dims = ReadCodeObject("launch_dims-O2");
  if (dims.empty()) GTEST_SKIP() << "launch_dims-O2.co is not built";
  hcq_program* program = nullptr;
  ASSERT_EQ(hcq_program_load(dev_, dims.data(), dims.size(), "launch_dims", &program), HCQ_OK) << hcq_last_error();
  hcq_buffer* out = nullptr;
  ASSERT_EQ(hcq_buffer_alloc(dev_, 1 << 16, 1, &out), HCQ_OK);
  hcq_buffer* const buffers[] = {out};
  const uint32_t salt = 7;
  struct Case {
    uint32_t global[3], local[3];
    const char* says;
  };
  const Case cases[] = {
      {{1, 1, 1}, {0, 1, 1}, "workgroup size 0 in dimension 0"},
      {{1, 1, 1}, {1025, 1, 1}, "workgroup size 1025 in dimension 0"},
      {{1, 1, 1}, {64, 32, 1}, "64 x 32 x 1 = 2048 work-items: at most 1024"},
      {{0, 1, 1}, {64, 1, 1}, "0 workgroups of 64 work-items in dimension 0"},
      {{1u << 26, 1, 1}, {64, 1, 1}, "67108864 workgroups of 64 work-items in dimension 0"},
      {{1, 1, 1u << 31}, {1, 1, 2}, "in dimension 2"},
  };
  for (const Case& c : cases) {
    hcq_queue* queue = nullptr;
    ASSERT_EQ(hcq_queue_new_compute(dev_, &queue), HCQ_OK);
    hcq_queue_exec(queue, program, buffers, 1, &salt, 1, c.global, c.local);
    EXPECT_EQ(hcq_queue_submit(queue, nullptr, 0), HCQ_ERROR_INVALID_ARGUMENT) << c.says;
    EXPECT_TRUE(Contains(hcq_last_error(), c.says)) << hcq_last_error();
    EXPECT_TRUE(Contains(hcq_last_error(), "launch_dims")) << hcq_last_error();
    hcq_queue_free(queue);
  }
  // The limits themselves run.
  const uint32_t global[3] = {1, 1, 1}, local[3] = {1024, 1, 1};
  EXPECT_EQ(hcq_program_run(program, buffers, 1, &salt, 1, global, local, 1, nullptr), HCQ_OK) << hcq_last_error();
  hcq_buffer_free(out);
  hcq_program_free(program);
}

}  // namespace
