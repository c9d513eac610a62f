// GSP-RM's protocol model (nv/sim/gsp_rm_model.h) driven by the driver's end of the queues (nv/gsp/message_queue.h)
// over host memory at scattered bus addresses, with the boot inputs built by the driver's builders
// (nv/gsp/boot_args.h) or by hand where a case needs them malformed. The test stands in for the device: a BAR0 write
// to NV_PGSP_QUEUE_HEAD(0) is the model's doorbell, every other register write goes to a register map the model
// reads as its priv bus. It also stands in for nouveau's r535_gsp_msg_run_cpu_sequencer, carrying out the sequencer
// the model posts (optionally skipping a step).
#include "nv/sim/gsp_rm_model.h"

#include <bit>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nv/gsp/boot_args.h"
#include "nv/gsp/message_queue.h"
#include "nv/regs/clc461_constants.h"
#include "nv/regs/clc561_constants.h"
#include "nv/regs/clc56f_constants.h"
#include "nv/regs/clc7b5_constants.h"
#include "nv/regs/clc9c0_constants.h"
#include "nv/regs/rpc_constants.h"
#include "nv/regs/sequencer_constants.h"
#include "nv/regs/status_constants.h"
#include "tests/nv/sim/host_device_memory.h"

namespace nv::sim {
namespace {

using ::testing::HasSubstr;
using namespace regs::rpc;  // NOLINT: the RPC numbers read as in the headers

constexpr absl::Duration kTimeout = absl::Seconds(5);
// For waits that must fail: long enough for a model that answers synchronously, bounded.
constexpr absl::Duration kShortTimeout = absl::Milliseconds(20);

// Bus addresses the test gives the boot's pages (any mapped, page-aligned addresses would do).
constexpr uint64_t kLibosArgsBus = 0x1'0000'0000;
constexpr uint64_t kRmArgsBus = 0x1'0000'1000;
constexpr uint64_t kLogBus = 0x1'0010'0000;  // three 64 KiB log buffers from here
constexpr uint64_t kLogSize = 0x10000;

// The registers the model's sequencer names: NV_PGSP_MAILBOX(0) and (1) (dev_gsp.h: 0x110804 + 4i) and
// NV_PGSP_QUEUE_HEAD(0) (0x110c00).
constexpr uint32_t kMailbox0 = 0x110804;
constexpr uint32_t kMailbox1 = 0x110808;
constexpr uint32_t kQueueHead0 = 0x110c00;

// Allocation parameter sizes: sizeof the 535.113.01 SDK structures (gcc, x86-64).
constexpr size_t kRootParams = 108;         // NV0000_ALLOC_PARAMETERS
constexpr size_t kDeviceParams = 56;        // NV0080_ALLOC_PARAMETERS
constexpr size_t kSubdeviceParams = 4;      // NV2080_ALLOC_PARAMETERS
constexpr size_t kVaspaceParams = 48;       // NV_VASPACE_ALLOCATION_PARAMETERS
constexpr size_t kChannelGroupParams = 20;  // NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS
constexpr size_t kCtxShareParams = 12;      // NV_CTXSHARE_ALLOCATION_PARAMETERS
constexpr size_t kChannelParams = 360;      // NV_CHANNEL_ALLOC_PARAMS
constexpr size_t kCopyParams = 8;           // NVB0B5_ALLOCATION_PARAMETERS
constexpr size_t kMemoryParams = 120;       // NV_MEMORY_ALLOCATION_PARAMS

// The handles a client of this test uses (nouveau's pattern).
constexpr uint32_t kClient = 0xc1d00001;
constexpr uint32_t kDevice = 0xde1d0000;
constexpr uint32_t kSubdevice = 0x5d1d0000;
constexpr uint32_t kVaspace = 0x90f10000;
constexpr uint32_t kChannelGroup = 0xa06c0000;
constexpr uint32_t kCtxShare = 0x90670000;
constexpr uint32_t kChannel = 0xf1f00000;
constexpr uint32_t kCompute = 0xc9c00000;
constexpr uint32_t kCopy = 0xc7b50000;
constexpr uint32_t kUsermode = 0xc5610000;
constexpr uint32_t kMemory = 0x00400000;

class RegisterMap : public PrivBus {
 public:
  uint32_t Read32(uint32_t address) override { return registers[address]; }
  void Write32(uint32_t address, uint32_t value) override { registers[address] = value; }
  std::map<uint32_t, uint32_t> registers;
};

std::vector<uint8_t> Params(size_t size) { return std::vector<uint8_t>(size, 0); }
void Put32(std::vector<uint8_t>& bytes, size_t offset, uint32_t value) { std::memcpy(&bytes[offset], &value, 4); }
template <typename T>
std::vector<uint8_t> Bytes(const T& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  return std::vector<uint8_t>(p, p + sizeof(T));
}

class GspRmModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto layout = gsp::LayoutSharedRegion();
    ASSERT_TRUE(layout.ok()) << layout.status();
    region_ = std::make_unique<testing::ScatteredRegion>(layout->page_table_entries);
    region_->MapInto(memory_);
    auto queue = gsp::MessageQueue::Create(region_->bytes(), region_->bus,
                                           [this] { Bar0Write(gsp::kDoorbellRegister, gsp::kDoorbellValue); });
    ASSERT_TRUE(queue.ok()) << queue.status();
    queue_ = std::move(*queue);
    queue_->set_event_handler([this](const gsp::GspMessage& m) { OnEvent(m); });

    for (uint64_t i = 0; i < pages_.size() / 512; ++i) {
      const uint64_t bus = i == 0 ? kLibosArgsBus : i == 1 ? kRmArgsBus : kLogBus + (i - 2) * 0x1000;
      memory_.MapPage(bus, reinterpret_cast<uint8_t*>(pages_.data() + i * 512));
    }
  }

  // The device's BAR0: the doorbell register is the model's, everything else the register map.
  void Bar0Write(uint32_t address, uint32_t value) {
    if (address == gsp::kDoorbellRegister) return model_.OnDoorbell();
    priv_.Write32(address, value);
  }

  // nouveau's r535_gsp_msg_run_cpu_sequencer, without delays; `skip_step_` (1-based) leaves one command out.
  void OnEvent(const gsp::GspMessage& m) {
    events_.push_back(m.function);
    if (m.function != NV_VGPU_MSG_EVENT_GSP_RUN_CPU_SEQUENCER) return;
    sequencer_ = m.payload;
    gsp::rpc_run_cpu_sequencer_v17_00 header;
    ASSERT_GE(m.payload.size(), sizeof(header));
    std::memcpy(&header, m.payload.data(), sizeof(header));
    std::vector<uint32_t> words((m.payload.size() - sizeof(header)) / 4);
    std::memcpy(words.data(), m.payload.data() + sizeof(header), words.size() * 4);
    ASSERT_LE(header.cmdIndex, words.size());
    int step = 0;
    for (uint32_t ptr = 0; ptr < header.cmdIndex;) {
      const uint32_t op = words[ptr];
      const uint32_t* a = &words[ptr + 1];
      const bool skip = ++step == skip_step_;
      switch (op) {
        case regs::gsp::GSP_SEQ_BUF_OPCODE_REG_WRITE:
          if (!skip) Bar0Write(a[0], a[1]);
          ptr += 3;
          break;
        case regs::gsp::GSP_SEQ_BUF_OPCODE_REG_MODIFY:
          // rmgspseq.h's order is addr, mask, val; tinygrad's run_cpu_seq reads addr, val, mask.
          if (!skip && !tinygrad_modify_order_) Bar0Write(a[0], (priv_.Read32(a[0]) & ~a[1]) | (a[2] & a[1]));
          if (!skip && tinygrad_modify_order_) Bar0Write(a[0], (priv_.Read32(a[0]) & ~a[2]) | (a[1] & a[2]));
          ptr += 4;
          break;
        case regs::gsp::GSP_SEQ_BUF_OPCODE_REG_POLL:
          // The model's registers settle at once: one read decides.
          if (!skip) poll_ok_ = (priv_.Read32(a[0]) & a[1]) == a[2];
          ptr += 6;
          break;
        default:
          FAIL() << "sequencer opcode " << op << " not expected from the model";
      }
    }
  }

  gsp::LibosRegions Regions() const {
    return {
        {kLogBus, kLogSize}, {kLogBus + kLogSize, kLogSize}, {kLogBus + 2 * kLogSize, kLogSize}, {kRmArgsBus, 0x1000}};
  }

  void WriteLibosArgs(const std::vector<gsp::LibosMemoryRegionInitArgument>& args) {
    std::memset(pages_.data(), 0, 0x1000);
    std::memcpy(pages_.data(), args.data(), args.size() * sizeof(args[0]));
  }

  void WriteRmArgs() {
    const gsp::MESSAGE_QUEUE_INIT_ARGUMENTS& q = queue_->init_arguments();
    auto rm_args = gsp::BuildRmArgs({q.sharedMemPhysAddr, q.pageTableEntryCount, q.cmdQueueOffset, q.statQueueOffset},
                                    /*resume=*/false);
    ASSERT_TRUE(rm_args.ok()) << rm_args.status();
    std::memcpy(pages_.data() + 512, &*rm_args, sizeof(*rm_args));
  }

  gsp::GspSystemInfo SystemInfo() {
    gsp::SystemInfoInputs in;
    in.bar0_address = 0xf000'0000;
    in.bar1_address = 0x38'0000'0000;
    in.bar3_address = 0x3a'0000'0000;
    in.bus = 1;
    auto info = gsp::BuildSystemInfo(in);
    EXPECT_TRUE(info.ok()) << info.status();
    return *info;
  }

  std::string Registry() {
    auto table = gsp::BuildRegistryTable(gsp::DefaultRegistryEntries());
    EXPECT_TRUE(table.ok()) << table.status();
    return *table;
  }

  // What the driver does before and at boot: queue the system information and the registry, write the LibOS and
  // RM arguments, and (the booter) start the GSP with the LibOS arguments' address.
  void StartBoot(const gsp::GspSystemInfo& info, const std::string& registry) {
    auto libos = gsp::BuildLibosArgs(Regions());
    ASSERT_TRUE(libos.ok()) << libos.status();
    WriteLibosArgs(*libos);
    WriteRmArgs();
    ASSERT_TRUE(queue_->SendRpc(NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO, Bytes(info), kTimeout).ok());
    ASSERT_TRUE(queue_
                    ->SendRpc(NV_VGPU_MSG_FUNCTION_SET_REGISTRY,
                              std::span(reinterpret_cast<const uint8_t*>(registry.data()), registry.size()), kTimeout)
                    .ok());
    model_.Boot(kLibosArgsBus);
  }

  void BootToInitDone() {
    StartBoot(SystemInfo(), Registry());
    auto done = queue_->WaitFor(NV_VGPU_MSG_EVENT_GSP_INIT_DONE, kTimeout);
    ASSERT_TRUE(done.ok()) << done.status() << " model: " << ModelErrors();
    ASSERT_EQ(model_.state(), GspRmModel::State::kRunning);
  }

  std::string ModelErrors() const {
    std::string all;
    for (const absl::Status& s : model_.errors()) absl::StrAppend(&all, s.ToString(), "; ");
    return all;
  }

  absl::StatusOr<gsp::GspMessage> Call(uint32_t function, const std::vector<uint8_t>& payload, size_t reply_size = 0) {
    absl::Status sent = queue_->SendRpc(function, payload, kTimeout);
    if (!sent.ok()) return sent;
    return queue_->WaitFor(function, kTimeout, reply_size);
  }

  absl::Status Alloc(uint32_t client, uint32_t parent, uint32_t object, uint32_t cls, std::vector<uint8_t> params) {
    gsp::rpc_gsp_rm_alloc_v03_00 rpc{};
    rpc.hClient = client;
    rpc.hParent = parent;
    rpc.hObject = object;
    rpc.hClass = cls;
    rpc.paramsSize = static_cast<uint32_t>(params.size());
    std::vector<uint8_t> payload = Bytes(rpc);
    payload.insert(payload.end(), params.begin(), params.end());
    auto reply = Call(NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC, payload);
    if (!reply.ok()) return reply.status();
    gsp::rpc_gsp_rm_alloc_v03_00 back;
    std::memcpy(&back, reply->payload.data(), sizeof(back));
    EXPECT_EQ(back.status, 0u);
    EXPECT_EQ(back.hObject, object);
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<uint8_t>> Control(uint32_t client, uint32_t object, uint32_t cmd,
                                               std::vector<uint8_t> params) {
    gsp::rpc_gsp_rm_control_v03_00 rpc{};
    rpc.hClient = client;
    rpc.hObject = object;
    rpc.cmd = cmd;
    rpc.paramsSize = static_cast<uint32_t>(params.size());
    std::vector<uint8_t> payload = Bytes(rpc);
    payload.insert(payload.end(), params.begin(), params.end());
    auto reply = Call(NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL, payload);
    if (!reply.ok()) return reply.status();
    return std::vector<uint8_t>(reply->payload.begin() + sizeof(rpc), reply->payload.end());
  }

  absl::Status Free(uint32_t client, uint32_t object) {
    gsp::rpc_free_v03_00 rpc{};
    rpc.params.hRoot = client;
    rpc.params.hObjectOld = object;
    return Call(NV_VGPU_MSG_FUNCTION_FREE, Bytes(rpc)).status();
  }

  absl::Status AllocClientAndDevice() {
    std::vector<uint8_t> root = Params(kRootParams);
    Put32(root, 0, kClient);  // NV0000_ALLOC_PARAMETERS.hClient
    if (absl::Status s = Alloc(kClient, kClient, kClient, rm_class::NV01_ROOT, root); !s.ok()) return s;
    std::vector<uint8_t> device = Params(kDeviceParams);
    Put32(device, 4, kClient);  // NV0080_ALLOC_PARAMETERS.hClientShare
    if (absl::Status s = Alloc(kClient, kClient, kDevice, rm_class::NV01_DEVICE_0, device); !s.ok()) return s;
    return Alloc(kClient, kDevice, kSubdevice, rm_class::NV20_SUBDEVICE_0, Params(kSubdeviceParams));
  }

  void ExpectRefused(const absl::Status& status, absl::string_view nv_status, absl::string_view why) {
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(status.message(), HasSubstr(nv_status));
    ASSERT_FALSE(model_.refusals().empty());
    EXPECT_THAT(model_.refusals().back(), HasSubstr(why));
  }

  testing::HostDeviceMemory memory_;
  RegisterMap priv_;
  GspRmModel model_{memory_, priv_};
  std::unique_ptr<testing::ScatteredRegion> region_;
  std::unique_ptr<gsp::MessageQueue> queue_;
  // LibOS arguments page, RM arguments page, 48 log pages: 8-byte aligned host memory.
  std::vector<uint64_t> pages_ = std::vector<uint64_t>((2 + 3 * kLogSize / 0x1000) * 512);
  std::vector<uint32_t> events_;
  std::vector<uint8_t> sequencer_;
  int skip_step_ = 0;
  bool tinygrad_modify_order_ = false;
  bool poll_ok_ = false;
};

TEST_F(GspRmModelTest, BootsToInitDoneOnceTheDriverRunsTheSequencer) {
  BootToInitDone();
  EXPECT_EQ(events_, (std::vector<uint32_t>{NV_VGPU_MSG_EVENT_GSP_RUN_CPU_SEQUENCER}));  // INIT_DONE was the reply
  // The sequencer, word by word: bufferSizeDWord 16, cmdIndex 16, regSaveArea zero, then
  //   REG_WRITE (0) MAILBOX(0) = 0x5e0c0de1; REG_POLL (2) MAILBOX(0) mask ~0 val 0x5e0c0de1 timeout 1000 error 0;
  //   REG_MODIFY (1) MAILBOX(1) mask 0xff00 val 0x3c00; REG_WRITE (0) QUEUE_HEAD(0) = 0.
  const uint32_t expected[] = {16, 16, 0,         0,          0,      0,         0,           0,          0,
                               0,  0,  kMailbox0, 0x5e0c0de1, 2,      kMailbox0, 0xffffffff,  0x5e0c0de1, 1000,
                               0,  1,  kMailbox1, 0xff00,     0x3c00, 0,         kQueueHead0, 0};
  ASSERT_EQ(sequencer_.size(), sizeof(expected));
  std::vector<uint32_t> words(std::size(expected));
  std::memcpy(words.data(), sequencer_.data(), sizeof(expected));
  EXPECT_EQ(words, std::vector<uint32_t>(std::begin(expected), std::end(expected)));
  EXPECT_TRUE(poll_ok_);
  EXPECT_EQ(priv_.registers[kMailbox0], 0x5e0c0de1u);
  EXPECT_EQ(priv_.registers[kMailbox1], 0xa5a53ca5u);  // 0xa5a5a5a5 with bits 15:8 replaced by 0x3c
  EXPECT_TRUE(model_.errors().empty()) << ModelErrors();
  EXPECT_EQ(model_.queue().commands_read(), 2u);  // SET_SYSTEM_INFO, SET_REGISTRY; no replies to either
  EXPECT_EQ(model_.queue().status_written(), 2u);
}

TEST_F(GspRmModelTest, StaticInfoDescribesAnRtx4090) {
  BootToInitDone();
  auto reply = Call(NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO, Params(sizeof(gsp::GspStaticConfigInfo)),
                    sizeof(gsp::GspStaticConfigInfo));
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_EQ(reply->payload.size(), 2168u);
  gsp::GspStaticConfigInfo info;
  std::memcpy(&info, reply->payload.data(), sizeof(info));
  // What nouveau reads: the internal handles, the TPC count over the GPCs present, the FB regions.
  EXPECT_EQ(info.hInternalClient, GspRmModel::kInternalClient);
  EXPECT_EQ(info.hInternalDevice, GspRmModel::kInternalDevice);
  EXPECT_EQ(info.hInternalSubdevice, GspRmModel::kInternalSubdevice);
  int gpcs = 0, tpcs = 0;
  for (int g = 0; g < 32; ++g) {
    if (info.gpcInfo.gpcMask & (1u << g)) {
      ++gpcs;
      tpcs += std::popcount(info.tpcInfo[g].tpcMask);
    }
  }
  EXPECT_EQ(gpcs, 11);  // AD102's 12 GPCs, one off on the RTX 4090
  EXPECT_EQ(tpcs, 64);  // 128 SMs, two per TPC
  EXPECT_EQ(info.fb_length, uint64_t{24} << 30);
  ASSERT_EQ(info.fbRegionInfoParams.numFBRegions, 2u);
  EXPECT_EQ(info.fbRegionInfoParams.fbRegion[0].base, 0u);
  EXPECT_EQ(info.fbRegionInfoParams.fbRegion[0].limit, 0x5dfffffffull);  // 24 GiB - 512 MiB - 1
  EXPECT_EQ(info.fbRegionInfoParams.fbRegion[1].bProtected, 1);
  EXPECT_STREQ(reinterpret_cast<const char*>(info.gpuNameString), "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(info.SM_info.maxWarpsPerSM, 48u);
}

TEST_F(GspRmModelTest, AllocatesTheComputeChainAndFreesIt) {
  BootToInitDone();
  const size_t internal = model_.objects().size();
  EXPECT_EQ(internal, 3u);  // GSP-RM's own client, device, subdevice
  ASSERT_TRUE(AllocClientAndDevice().ok());
  ASSERT_TRUE(Alloc(kClient, kDevice, kVaspace, rm_class::FERMI_VASPACE_A, Params(kVaspaceParams)).ok());
  std::vector<uint8_t> group = Params(kChannelGroupParams);
  Put32(group, 8, kVaspace);  // hVASpace
  ASSERT_TRUE(Alloc(kClient, kDevice, kChannelGroup, rm_class::KEPLER_CHANNEL_GROUP_A, group).ok());
  std::vector<uint8_t> share = Params(kCtxShareParams);
  Put32(share, 0, kVaspace);  // hVASpace
  ASSERT_TRUE(Alloc(kClient, kChannelGroup, kCtxShare, rm_class::FERMI_CONTEXT_SHARE_A, share).ok());
  std::vector<uint8_t> channel = Params(kChannelParams);
  Put32(channel, 16, 0x10000);    // gpFifoEntries
  Put32(channel, 24, kCtxShare);  // hContextShare
  ASSERT_TRUE(Alloc(kClient, kChannelGroup, kChannel, regs::cls::AMPERE_CHANNEL_GPFIFO_A, channel).ok());
  ASSERT_TRUE(Alloc(kClient, kChannel, kCompute, regs::cls::ADA_COMPUTE_A, {}).ok());
  ASSERT_TRUE(Alloc(kClient, kChannel, kCopy, regs::cls::AMPERE_DMA_COPY_B, Params(kCopyParams)).ok());
  ASSERT_TRUE(Alloc(kClient, kSubdevice, kUsermode, regs::cls::AMPERE_USERMODE_A, {}).ok());
  ASSERT_TRUE(Alloc(kClient, kDevice, kMemory, rm_class::NV01_MEMORY_LOCAL_USER, Params(kMemoryParams)).ok());
  EXPECT_EQ(model_.objects().size(), internal + 11);

  // The channel's work-submit token is its channel id: the first channel of the GPU.
  auto token = Control(kClient, kChannel, 0xc36f0108, Params(4));
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ((*token)[0], 0);
  // The GPU's UUID, ASCII: "GPU-" and 36 characters and a NUL.
  auto gid = Control(kClient, kSubdevice, 0x2080014a, Params(268));
  ASSERT_TRUE(gid.ok()) << gid.status();
  uint32_t length;
  std::memcpy(&length, gid->data() + 8, 4);
  EXPECT_EQ(length, 41u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(gid->data() + 12), 4), "GPU-");
  // The same control on GSP-RM's internal subdevice (nouveau's target for internal controls).
  EXPECT_TRUE(Control(GspRmModel::kInternalClient, GspRmModel::kInternalSubdevice, 0x2080014a, Params(268)).ok());

  // Freeing the channel group takes the context share, the channel and its engine objects with it.
  ASSERT_TRUE(Free(kClient, kChannelGroup).ok());
  EXPECT_EQ(model_.objects().Find(kClient, kCompute), nullptr);
  EXPECT_EQ(model_.objects().Find(kClient, kCtxShare), nullptr);
  EXPECT_NE(model_.objects().Find(kClient, kVaspace), nullptr);
  EXPECT_EQ(model_.objects().size(), internal + 6);
  // Freeing the client frees the rest.
  ASSERT_TRUE(Free(kClient, kClient).ok());
  EXPECT_EQ(model_.objects().size(), internal);
  EXPECT_TRUE(model_.errors().empty()) << ModelErrors();
}

TEST_F(GspRmModelTest, RefusesBadAllocationsWithTheirStatus) {
  BootToInitDone();
  ASSERT_TRUE(AllocClientAndDevice().ok());
  const size_t before = model_.objects().size();
  ExpectRefused(Alloc(kClient, 0xbad0, kVaspace, rm_class::FERMI_VASPACE_A, Params(kVaspaceParams)),
                "NV_ERR_INVALID_OBJECT_PARENT", "parent 0xbad0 is not an object of client");
  ExpectRefused(Alloc(kClient, kDevice, kCtxShare, rm_class::FERMI_CONTEXT_SHARE_A, Params(kCtxShareParams)),
                "NV_ERR_INVALID_OBJECT_PARENT", "expected KEPLER_CHANNEL_GROUP_A");
  ExpectRefused(Alloc(kClient, kDevice, 0x1234, 0xdead, {}), "NV_ERR_INVALID_CLASS", "class 0xdead");
  ExpectRefused(Alloc(kClient, kDevice, kVaspace, rm_class::FERMI_VASPACE_A, Params(kVaspaceParams - 4)),
                "NV_ERR_INVALID_PARAM_STRUCT", "paramsSize 44, expected 48");
  ExpectRefused(Alloc(kClient, kDevice, kSubdevice, rm_class::NV20_SUBDEVICE_0, Params(kSubdeviceParams)),
                "NV_ERR_INSERT_DUPLICATE_NAME", "handle 0x5d1d0000 is already");
  ExpectRefused(Alloc(0xc1d0beef, kDevice, kVaspace, rm_class::FERMI_VASPACE_A, Params(kVaspaceParams)),
                "NV_ERR_INVALID_CLIENT", "no client 0xc1d0beef");
  std::vector<uint8_t> share = Params(kCtxShareParams);
  Put32(share, 0, kDevice);  // hVASpace names the device
  ASSERT_TRUE(Alloc(kClient, kDevice, kVaspace, rm_class::FERMI_VASPACE_A, Params(kVaspaceParams)).ok());
  std::vector<uint8_t> group = Params(kChannelGroupParams);
  ASSERT_TRUE(Alloc(kClient, kDevice, kChannelGroup, rm_class::KEPLER_CHANNEL_GROUP_A, group).ok());
  ExpectRefused(Alloc(kClient, kChannelGroup, kCtxShare, rm_class::FERMI_CONTEXT_SHARE_A, share),
                "NV_ERR_INVALID_OBJECT_HANDLE", "hVASpace 0xde1d0000 is not a FERMI_VASPACE_A");
  ExpectRefused(Free(kClient, 0x7777), "NV_ERR_INVALID_OBJECT_HANDLE", "FREE of object 0x7777");
  ExpectRefused(Free(GspRmModel::kInternalClient, GspRmModel::kInternalSubdevice), "NV_ERR_INSUFFICIENT_PERMISSIONS",
                "of GSP-RM's internal client");
  EXPECT_NE(model_.objects().Find(GspRmModel::kInternalClient, GspRmModel::kInternalSubdevice), nullptr);
  ExpectRefused(Control(kClient, kSubdevice, 0x20801112, Params(3212)).status(), "NV_ERR_NOT_SUPPORTED",
                "not a control the virtual GSP-RM implements");
  ExpectRefused(Control(kClient, kSubdevice, 0x2080014a, Params(200)).status(), "NV_ERR_INVALID_PARAM_STRUCT",
                "paramsSize 200, expected 268");
  ExpectRefused(Call(NV_VGPU_MSG_FUNCTION_GET_ENGINE_UTILIZATION, Params(8)).status(), "NV_ERR_NOT_SUPPORTED",
                "not an RPC the virtual GSP-RM implements");
  EXPECT_EQ(model_.objects().size(), before + 2);         // only the VA space and the channel group
  EXPECT_TRUE(model_.errors().empty()) << ModelErrors();  // refusals are answers, not protocol errors
}

TEST_F(GspRmModelTest, ASkippedSequencerStepMeansNoInitDone) {
  skip_step_ = 3;  // the REG_MODIFY
  StartBoot(SystemInfo(), Registry());
  auto done = queue_->WaitFor(NV_VGPU_MSG_EVENT_GSP_INIT_DONE, kShortTimeout);
  EXPECT_EQ(done.status().code(), absl::StatusCode::kDeadlineExceeded) << done.status();
  EXPECT_EQ(model_.state(), GspRmModel::State::kFailed);
  ASSERT_EQ(model_.errors().size(), 1u);
  EXPECT_THAT(model_.errors()[0].message(), HasSubstr("step 3 (REG_MODIFY 0x110808 mask 0xff00 value 0x3c00) left "
                                                      "0xa5a5a5a5, expected 0xa5a53ca5"));
}

// tinygrad's run_cpu_seq takes REG_MODIFY's operands as addr, val, mask; rmgspseq.h (GSP_SEQ_BUF_PAYLOAD_REG_MODIFY)
// and nouveau have addr, mask, val. Read tinygrad's way: (0xa5a5a5a5 & ~0x3c00) | (0xff00 & 0x3c00) = 0xa5a5bda5.
TEST_F(GspRmModelTest, AModifyWithMaskAndValueSwappedIsCaught) {
  tinygrad_modify_order_ = true;
  StartBoot(SystemInfo(), Registry());
  auto done = queue_->WaitFor(NV_VGPU_MSG_EVENT_GSP_INIT_DONE, kShortTimeout);
  EXPECT_EQ(done.status().code(), absl::StatusCode::kDeadlineExceeded) << done.status();
  EXPECT_EQ(priv_.registers[kMailbox1], 0xa5a5bda5u);
  EXPECT_EQ(model_.state(), GspRmModel::State::kFailed);
  ASSERT_EQ(model_.errors().size(), 1u);
  EXPECT_THAT(model_.errors()[0].message(), HasSubstr("left 0xa5a5bda5, expected 0xa5a53ca5"));
}

TEST_F(GspRmModelTest, AnRpcSentBeforeInitDoneIsAnsweredAfterIt) {
  StartBoot(SystemInfo(), Registry());
  // The sequencer event is waiting in the status queue; the driver sends before reading it.
  ASSERT_EQ(model_.state(), GspRmModel::State::kAwaitingSequencer);
  ASSERT_TRUE(
      queue_->SendRpc(NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO, Params(sizeof(gsp::GspStaticConfigInfo)), kTimeout)
          .ok());
  ASSERT_TRUE(queue_->WaitFor(NV_VGPU_MSG_EVENT_GSP_INIT_DONE, kTimeout).ok()) << ModelErrors();
  auto reply = queue_->WaitFor(NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO, kTimeout);
  EXPECT_TRUE(reply.ok()) << reply.status();
}

TEST_F(GspRmModelTest, TheRegistryMustFollowTheSystemInformation) {
  auto libos = gsp::BuildLibosArgs(Regions());
  ASSERT_TRUE(libos.ok());
  WriteLibosArgs(*libos);
  WriteRmArgs();
  const std::string registry = Registry();
  ASSERT_TRUE(queue_
                  ->SendRpc(NV_VGPU_MSG_FUNCTION_SET_REGISTRY,
                            std::span(reinterpret_cast<const uint8_t*>(registry.data()), registry.size()), kTimeout)
                  .ok());
  model_.Boot(kLibosArgsBus);
  EXPECT_EQ(model_.state(), GspRmModel::State::kFailed);
  ASSERT_EQ(model_.errors().size(), 1u);
  EXPECT_THAT(model_.errors()[0].message(), HasSubstr("first RPC at init is NV_VGPU_MSG_FUNCTION_SET_REGISTRY (0x49)"));
}

TEST_F(GspRmModelTest, TheConfigMirrorMustBeTheChips) {
  gsp::GspSystemInfo info = SystemInfo();
  info.pciConfigMirrorBase = 0x92000;  // Hopper-and-later's (tinygrad's fmc_boot value), not AD102's
  StartBoot(info, Registry());
  EXPECT_EQ(model_.state(), GspRmModel::State::kFailed);
  ASSERT_EQ(model_.errors().size(), 1u);
  EXPECT_THAT(model_.errors()[0].message(), HasSubstr("pciConfigMirrorBase/Size 0x92000/0x1000"));
}

TEST_F(GspRmModelTest, AMalformedRegistryStopsTheBoot) {
  // One DWORD entry whose name starts past the end of the 32-byte table: header 8, entry 16, "RMX\0" at 24.
  std::string table(32, '\0');
  const uint32_t words[] = {32, 1, /*nameOffset=*/40, /*type=*/1, /*data=*/1, /*length=*/4};
  std::memcpy(table.data(), words, 8);
  std::memcpy(table.data() + 8, &words[2], 4);
  table[12] = 1;  // type
  std::memcpy(table.data() + 16, &words[4], 8);
  std::memcpy(table.data() + 24, "RMX", 4);
  StartBoot(SystemInfo(), table);
  EXPECT_EQ(model_.state(), GspRmModel::State::kFailed);
  ASSERT_EQ(model_.errors().size(), 1u);
  EXPECT_THAT(model_.errors()[0].message(), HasSubstr("entry 0: nameOffset 40 is not a non-empty NUL-terminated"));
  auto message = queue_->Poll();
  ASSERT_TRUE(message.ok());
  EXPECT_FALSE(message->has_value());  // no sequencer, no INIT_DONE
}

TEST_F(GspRmModelTest, SystemInfoWithoutBar0StopsTheBoot) {
  gsp::GspSystemInfo info = SystemInfo();
  info.gpuPhysAddr = 0;
  StartBoot(info, Registry());
  EXPECT_EQ(model_.state(), GspRmModel::State::kFailed);
  ASSERT_EQ(model_.errors().size(), 1u);
  EXPECT_THAT(model_.errors()[0].message(), HasSubstr("gpuPhysAddr (BAR0) is 0"));
}

TEST_F(GspRmModelTest, LibosArgumentsWithoutRmargsAreRefused) {
  auto libos = gsp::BuildLibosArgs(Regions());
  ASSERT_TRUE(libos.ok());
  libos->pop_back();  // RMARGS
  WriteLibosArgs(*libos);
  WriteRmArgs();
  model_.Boot(kLibosArgsBus);
  EXPECT_EQ(model_.state(), GspRmModel::State::kFailed);
  ASSERT_EQ(model_.errors().size(), 1u);
  EXPECT_THAT(model_.errors()[0].message(), HasSubstr("no \"RMARGS\" region (3 regions given)"));
  EXPECT_FALSE(model_.queue().started());
}

// tinygrad's NV_GSP.init_golden_image names the client in hClient, with hParent 0 and an unrelated hObject, and
// asks for the name string.
TEST_F(GspRmModelTest, ATinygradStyleClientAndItsNameString) {
  BootToInitDone();
  constexpr uint32_t kTinygradRoot = 0xc1e00004;
  ASSERT_TRUE(Alloc(kTinygradRoot, 0, 0xcf000000, rm_class::NV01_ROOT, Params(kRootParams)).ok());
  EXPECT_NE(model_.objects().Find(kTinygradRoot, kTinygradRoot), nullptr);
  std::vector<uint8_t> device = Params(kDeviceParams);
  Put32(device, 4, kTinygradRoot);
  ASSERT_TRUE(Alloc(kTinygradRoot, kTinygradRoot, 0xcf000001, rm_class::NV01_DEVICE_0, device).ok());
  ASSERT_TRUE(Alloc(kTinygradRoot, 0xcf000001, 0xcf000002, rm_class::NV20_SUBDEVICE_0, Params(kSubdeviceParams)).ok());
  std::vector<uint8_t> ask = Params(132);
  Put32(ask, 0, 1);  // NV2080_CTRL_GPU_GET_NAME_STRING_FLAGS_TYPE_UNICODE
  auto name = Control(kTinygradRoot, 0xcf000002, 0x20800110, ask);
  ASSERT_TRUE(name.ok()) << name.status();
  const std::string expected = "NVIDIA GeForce RTX 4090";
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ((*name)[4 + 2 * i], expected[i]) << i;
    EXPECT_EQ((*name)[5 + 2 * i], 0) << i;
  }
  // A second client with the same handle is a duplicate.
  ExpectRefused(Alloc(kTinygradRoot, 0, 0xcf000003, rm_class::NV01_ROOT, Params(kRootParams)),
                "NV_ERR_INSERT_DUPLICATE_NAME", "client 0xc1e00004 exists");
}

// Bad input never crashes or stops the model: random RM RPC payloads of random sizes (a fixed seed) are answered,
// each with a status, and the model keeps answering.
TEST_F(GspRmModelTest, RandomRmPayloadsAreAnsweredNotFatal) {
  BootToInitDone();
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const uint32_t functions[] = {NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC, NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL,
                                NV_VGPU_MSG_FUNCTION_FREE};
  for (int i = 0; i < 200; ++i) {
    const uint32_t function = functions[next() % std::size(functions)];
    std::vector<uint8_t> payload(next() % 600);
    for (uint8_t& b : payload) b = static_cast<uint8_t>(next());
    // paramsSize never beyond the bytes sent: a larger one declares continuation records, and a record that
    // promises them but is not full stops the queue (nv/sim/gsp_message_queue.h), not the RM. Every other time
    // the bytes that follow exactly, so the checks behind it are reached; otherwise fewer.
    const size_t header = function == NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC     ? sizeof(gsp::rpc_gsp_rm_alloc_v03_00)
                          : function == NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL ? sizeof(gsp::rpc_gsp_rm_control_v03_00)
                                                                            : 0;
    if (header != 0 && payload.size() >= header) {
      const uint32_t follow = static_cast<uint32_t>(payload.size() - header);
      const size_t at = function == NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC
                            ? offsetof(gsp::rpc_gsp_rm_alloc_v03_00, paramsSize)
                            : offsetof(gsp::rpc_gsp_rm_control_v03_00, paramsSize);
      Put32(payload, at, i % 2 == 0 ? follow : follow / 2);
    }
    ASSERT_TRUE(queue_->SendRpc(function, payload, kTimeout).ok());
    auto reply = queue_->WaitFor(function, kTimeout);
    ASSERT_TRUE(reply.ok() || reply.status().code() == absl::StatusCode::kFailedPrecondition) << reply.status();
  }
  EXPECT_EQ(model_.state(), GspRmModel::State::kRunning);
  EXPECT_TRUE(model_.errors().empty()) << ModelErrors();
  EXPECT_TRUE(Call(NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO, Params(sizeof(gsp::GspStaticConfigInfo))).ok());
}

TEST_F(GspRmModelTest, AfterUnloadRpcsAreRefused) {
  BootToInitDone();
  // rpc_unloading_guest_driver_v1F_07 as nouveau sends it on unload: bInPMTransition 0, bGc6Entering 0, newLevel 0.
  ASSERT_TRUE(Call(NV_VGPU_MSG_FUNCTION_UNLOADING_GUEST_DRIVER, Params(8)).ok());
  EXPECT_EQ(model_.state(), GspRmModel::State::kUnloaded);
  ExpectRefused(Call(NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO, Params(sizeof(gsp::GspStaticConfigInfo))).status(),
                "NV_ERR_INVALID_STATE", "after UNLOADING_GUEST_DRIVER");
}

TEST_F(GspRmModelTest, InjectedBadChecksumIsCaughtByTheDriver) {
  BootToInitDone();
  model_.CorruptNextChecksum();
  auto reply = Call(NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO, Params(sizeof(gsp::GspStaticConfigInfo)),
                    sizeof(gsp::GspStaticConfigInfo));
  ASSERT_FALSE(reply.ok());
  EXPECT_THAT(reply.status().message(), HasSubstr("checksum"));
}

TEST_F(GspRmModelTest, InjectedRpcErrorReachesTheDriverAndTheRpcIsNotDone) {
  BootToInitDone();
  model_.FailNextReply(NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC, regs::status::NV_ERR_NO_MEMORY);
  std::vector<uint8_t> root = Params(kRootParams);
  ExpectRefused(Alloc(kClient, kClient, kClient, rm_class::NV01_ROOT, root), "NV_ERR_NO_MEMORY", "injected");
  EXPECT_EQ(model_.objects().Find(kClient, kClient), nullptr);
  EXPECT_TRUE(Alloc(kClient, kClient, kClient, rm_class::NV01_ROOT, root).ok());  // once only
}

TEST_F(GspRmModelTest, ALostDoorbellLeavesTheRpcUnansweredUntilTheNext) {
  BootToInitDone();
  model_.LoseNextDoorbell();
  std::vector<uint8_t> request = Params(sizeof(gsp::GspStaticConfigInfo));
  ASSERT_TRUE(queue_->SendRpc(NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO, request, kTimeout).ok());
  auto lost = queue_->WaitFor(NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO, kShortTimeout);
  EXPECT_EQ(lost.status().code(), absl::StatusCode::kDeadlineExceeded) << lost.status();
  Bar0Write(kQueueHead0, 0);  // the driver rings again
  auto reply = queue_->WaitFor(NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO, kTimeout);
  EXPECT_TRUE(reply.ok()) << reply.status();
}

}  // namespace
}  // namespace nv::sim
