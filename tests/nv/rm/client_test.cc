// The RM client (nv/rm/client.h) over a fake transport that records each call and answers as scripted: the handles
// it chooses (nouveau's client pattern, tinygrad's object counter), the parameters its typed helpers send (worked
// out from the headers and the nouveau/tinygrad code each helper names), free order, and what freeing a parent does
// to its children. The GSP transport's bytes are gsp_transport_test's.
#include "nv/rm/client.h"

#include <cstring>
#include <deque>
#include <vector>

#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nv/regs/status_constants.h"
#include "nv/rm/classes.h"
#include "nv/rm/nv_status.h"

namespace nv::rm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Call {
  enum Kind { kAlloc, kControl, kFree } kind;
  Handle client, parent, object;
  uint32_t class_or_cmd;
  std::vector<uint8_t> params;
};

// Records calls; answers OK, or the next scripted NV_STATUS; copies `write_back` over the parameters of a
// successful call when it is set.
class FakeTransport : public Transport {
 public:
  absl::StatusOr<Handle> Alloc(Handle client, Handle parent, Handle object, uint32_t class_id,
                               std::span<uint8_t> params) override {
    calls.push_back({Call::kAlloc, client, parent, object, class_id, {params.begin(), params.end()}});
    if (absl::Status s = Answer(params); !s.ok()) return s;
    return object;
  }
  absl::Status Control(Handle client, Handle object, uint32_t cmd, std::span<uint8_t> params) override {
    calls.push_back({Call::kControl, client, kNullObject, object, cmd, {params.begin(), params.end()}});
    return Answer(params);
  }
  absl::Status Free(Handle client, Handle parent, Handle object) override {
    calls.push_back({Call::kFree, client, parent, object, 0, {}});
    return Answer({});
  }
  absl::string_view name() const override { return "fake RM"; }

  std::vector<Call> calls;
  std::deque<uint32_t> statuses;  // NV_STATUS of the next calls; NV_OK once empty
  std::vector<uint8_t> write_back;

 private:
  absl::Status Answer(std::span<uint8_t> params) {
    uint32_t status = regs::status::NV_OK;
    if (!statuses.empty()) {
      status = statuses.front();
      statuses.pop_front();
    }
    if (status != regs::status::NV_OK) return NvStatusError(status, "fake RM");
    const size_t n = std::min(params.size(), write_back.size());
    if (n != 0) std::memcpy(params.data(), write_back.data(), n);
    return absl::OkStatus();
  }
};

std::vector<uint32_t> Words(const std::vector<uint8_t>& bytes) {
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

std::vector<Handle> Freed(const FakeTransport& t) {
  std::vector<Handle> freed;
  for (const Call& c : t.calls) {
    if (c.kind == Call::kFree) freed.push_back(c.object);
  }
  return freed;
}

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(rm_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
  }

  FakeTransport rm_;
  std::unique_ptr<Client> client_;
};

// nouveau's r535_gsp_client_ctor: handle 0xc1d00000 | id, NV01_ROOT with client, parent and object all that handle,
// NV0000_ALLOC_PARAMETERS {hClient, processID ~0, processName zero} (4 + 4 + 100 bytes).
TEST_F(ClientTest, TheRootClientIsAllocatedAsNouveauDoes) {
  EXPECT_EQ(client_->handle(), 0xc1d00000u);
  ASSERT_EQ(rm_.calls.size(), 1u);
  const Call& root = rm_.calls[0];
  EXPECT_EQ(root.kind, Call::kAlloc);
  EXPECT_EQ(root.client, 0xc1d00000u);
  EXPECT_EQ(root.parent, 0xc1d00000u);
  EXPECT_EQ(root.object, 0xc1d00000u);
  EXPECT_EQ(root.class_or_cmd, 0u);  // NV01_ROOT
  ASSERT_EQ(root.params.size(), 108u);
  std::vector<uint32_t> words = Words(root.params);
  EXPECT_EQ(words[0], 0xc1d00000u);
  EXPECT_EQ(words[1], 0xffffffffu);
  for (size_t i = 2; i < words.size(); ++i) EXPECT_EQ(words[i], 0u) << i;
}

TEST(ClientCreateTest, TheIndexGoesInTheLowBits) {
  FakeTransport rm;
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(rm, 0x2a);
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client)->handle(), 0xc1d0002au);
  EXPECT_THAT(Client::Create(rm, 0x10000).status().message(),
              HasSubstr("RM client index 65536: client handles are 0xc1d00000 | an index up to 0xffff"));
}

// A transport whose RM chooses the client handle (the kernel RM may: NVOS64's hObjectNew "0 to generate").
class RenamingTransport : public FakeTransport {
 public:
  absl::StatusOr<Handle> Alloc(Handle client, Handle parent, Handle object, uint32_t class_id,
                               std::span<uint8_t> params) override {
    BAREGPU_ASSIGN_OR_RETURN(Handle made, FakeTransport::Alloc(client, parent, object, class_id, params));
    return class_id == NV01_ROOT ? 0xc1d00123 : made;
  }
};

TEST(ClientCreateTest, TheClientTakesTheHandleTheRmReports) {
  RenamingTransport rm;
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(rm);
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client)->handle(), 0xc1d00123u);
  absl::StatusOr<Object> device = (*client)->AllocDevice();
  ASSERT_TRUE(device.ok());
  ASSERT_EQ(rm.calls.back().kind, Call::kAlloc);
  EXPECT_EQ(rm.calls.back().client, 0xc1d00123u);
  EXPECT_EQ(rm.calls.back().parent, 0xc1d00123u);
  EXPECT_EQ(Words(rm.calls.back().params)[1], 0xc1d00123u);  // hClientShare
}

TEST(ClientCreateTest, AFailedRootAllocIsAnError) {
  FakeTransport rm;
  rm.statuses = {regs::status::NV_ERR_INSUFFICIENT_RESOURCES};
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(rm);
  EXPECT_EQ(client.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(NvStatusOf(client.status()), regs::status::NV_ERR_INSUFFICIENT_RESOURCES);
  EXPECT_EQ(rm.calls.size(), 1u);  // nothing to free
}

TEST_F(ClientTest, ObjectHandlesCountFromTinygradsBaseAndAreNeverReused) {
  absl::StatusOr<Object> device = client_->AllocDevice();
  ASSERT_TRUE(device.ok());
  EXPECT_EQ(device->handle(), 0xcf000000u);
  ASSERT_TRUE(device->Free().ok());
  rm_.statuses = {regs::status::NV_ERR_INVALID_CLASS};
  EXPECT_FALSE(client_->AllocDevice().ok());  // a failed alloc uses up its handle too
  absl::StatusOr<Object> again = client_->AllocDevice();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->handle(), 0xcf000002u);
  std::vector<Handle> allocated;
  for (const Call& c : rm_.calls) {
    if (c.kind == Call::kAlloc) allocated.push_back(c.object);
  }
  EXPECT_THAT(allocated, ElementsAre(0xc1d00000u, 0xcf000000u, 0xcf000001u, 0xcf000002u));
}

// The typed helpers: class, parent and parameter bytes of each (params.h gives the layouts).
TEST_F(ClientTest, TypedHelpersSendTheClassesAndParametersOfAd102) {
  absl::StatusOr<Object> device = client_->AllocDevice();
  ASSERT_TRUE(device.ok());
  absl::StatusOr<Object> subdevice = client_->AllocSubdevice(*device);
  ASSERT_TRUE(subdevice.ok());
  NV_VASPACE_ALLOCATION_PARAMETERS va{};
  va.flags = 0x48;  // IS_EXTERNALLY_OWNED | ENABLE_PAGE_FAULTING (tinygrad's NVDevice)
  absl::StatusOr<Object> vaspace = client_->AllocVaSpace(*device, va);
  ASSERT_TRUE(vaspace.ok());
  NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS group_params{};
  group_params.engineType = NV2080_ENGINE_TYPE_GRAPHICS;
  absl::StatusOr<Object> group = client_->AllocChannelGroup(*device, group_params);
  ASSERT_TRUE(group.ok());
  NV_CTXSHARE_ALLOCATION_PARAMETERS share_params{};
  share_params.hVASpace = vaspace->handle();
  share_params.flags = NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC;
  absl::StatusOr<Object> share = client_->AllocContextShare(*group, share_params);
  ASSERT_TRUE(share.ok());
  NV_CHANNELGPFIFO_ALLOCATION_PARAMETERS channel_params{};
  channel_params.gpFifoEntries = 0x400;
  channel_params.hContextShare = share->handle();
  absl::StatusOr<Object> channel = client_->AllocGpfifoChannel(*group, channel_params);
  ASSERT_TRUE(channel.ok());
  absl::StatusOr<Object> compute = client_->AllocCompute(*channel);
  ASSERT_TRUE(compute.ok());
  absl::StatusOr<Object> copy = client_->AllocCopy(*channel, 2);
  ASSERT_TRUE(copy.ok());
  absl::StatusOr<Object> usermode = client_->AllocUsermode(*subdevice);
  ASSERT_TRUE(usermode.ok());

  ASSERT_EQ(rm_.calls.size(), 10u);
  auto expect = [&](size_t i, Handle parent, Handle object, uint32_t class_id, size_t params_size) {
    SCOPED_TRACE(i);
    EXPECT_EQ(rm_.calls[i].kind, Call::kAlloc);
    EXPECT_EQ(rm_.calls[i].client, 0xc1d00000u);
    EXPECT_EQ(rm_.calls[i].parent, parent);
    EXPECT_EQ(rm_.calls[i].object, object);
    EXPECT_EQ(rm_.calls[i].class_or_cmd, class_id);
    EXPECT_EQ(rm_.calls[i].params.size(), params_size);
  };
  expect(1, 0xc1d00000, 0xcf000000, 0x80, 56);     // NV01_DEVICE_0, NV0080_ALLOC_PARAMETERS
  expect(2, 0xcf000000, 0xcf000001, 0x2080, 4);    // NV20_SUBDEVICE_0, NV2080_ALLOC_PARAMETERS
  expect(3, 0xcf000000, 0xcf000002, 0x90f1, 48);   // FERMI_VASPACE_A
  expect(4, 0xcf000000, 0xcf000003, 0xa06c, 20);   // KEPLER_CHANNEL_GROUP_A
  expect(5, 0xcf000003, 0xcf000004, 0x9067, 12);   // FERMI_CONTEXT_SHARE_A
  expect(6, 0xcf000003, 0xcf000005, 0xc56f, 360);  // AMPERE_CHANNEL_GPFIFO_A
  expect(7, 0xcf000005, 0xcf000006, 0xc9c0, 0);    // ADA_COMPUTE_A, no parameters
  expect(8, 0xcf000005, 0xcf000007, 0xc7b5, 8);    // AMPERE_DMA_COPY_B, NVC0B5_ALLOCATION_PARAMETERS
  expect(9, 0xcf000001, 0xcf000008, 0xc561, 0);    // AMPERE_USERMODE_A, no parameters
  // Device: deviceId 0, hClientShare = the client, the rest (vaMode OPTIONAL_MULTIPLE_VASPACES) 0.
  EXPECT_THAT(Words(rm_.calls[1].params), ElementsAre(0, 0xc1d00000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
  EXPECT_THAT(Words(rm_.calls[2].params), ElementsAre(0));
  EXPECT_EQ(Words(rm_.calls[3].params)[1], 0x48u);
  EXPECT_THAT(Words(rm_.calls[4].params), ElementsAre(0, 0, 0, 1, 0));     // engineType GRAPHICS
  EXPECT_THAT(Words(rm_.calls[5].params), ElementsAre(0xcf000002, 1, 0));  // hVASpace, SUBCONTEXT_ASYNC
  EXPECT_EQ(Words(rm_.calls[6].params)[4], 0x400u);                        // gpFifoEntries at byte 16
  EXPECT_EQ(Words(rm_.calls[6].params)[6], 0xcf000004u);                   // hContextShare at byte 24
  EXPECT_THAT(Words(rm_.calls[8].params), ElementsAre(1, 0xb));            // VERSION_1, COPY0 (9) + 2
}

TEST_F(ClientTest, ParametersTheRmWroteComeBack) {
  absl::StatusOr<Object> device = client_->AllocDevice();
  ASSERT_TRUE(device.ok());
  NV_VASPACE_ALLOCATION_PARAMETERS va{};
  rm_.write_back = std::vector<uint8_t>(48, 0x11);
  ASSERT_TRUE(client_->AllocVaSpace(*device, va).ok());
  EXPECT_EQ(va.vaBase, 0x1111111111111111u);
  uint32_t value = 5;
  rm_.write_back = {9, 0, 0, 0};
  ASSERT_TRUE(client_->Control(*device, 0x801701, value).ok());
  EXPECT_EQ(value, 9u);
  EXPECT_EQ(rm_.calls.back().kind, Call::kControl);
  EXPECT_EQ(rm_.calls.back().object, 0xcf000000u);
  EXPECT_EQ(rm_.calls.back().class_or_cmd, 0x801701u);
  EXPECT_THAT(rm_.calls.back().params, ElementsAre(5, 0, 0, 0));
}

TEST_F(ClientTest, ObjectsFreeInReverseOrderAndTheRootLast) {
  {
    absl::StatusOr<Object> device = client_->AllocDevice();
    ASSERT_TRUE(device.ok());
    absl::StatusOr<Object> subdevice = client_->AllocSubdevice(*device);
    ASSERT_TRUE(subdevice.ok());
    absl::StatusOr<Object> usermode = client_->AllocUsermode(*subdevice);
    ASSERT_TRUE(usermode.ok());
    EXPECT_EQ(client_->object_count(), 3u);
  }
  EXPECT_THAT(Freed(rm_), ElementsAre(0xcf000002u, 0xcf000001u, 0xcf000000u));
  // Free names each object's parent (the ioctl transport's NVOS00 hObjectParent needs it).
  EXPECT_EQ(rm_.calls[4].parent, 0xcf000001u);
  EXPECT_EQ(client_->object_count(), 0u);
  client_.reset();
  EXPECT_THAT(Freed(rm_), ElementsAre(0xcf000002u, 0xcf000001u, 0xcf000000u, 0xc1d00000u));
  EXPECT_EQ(rm_.calls.back().parent, kNullObject);
}

TEST_F(ClientTest, FreeingAParentInvalidatesItsChildren) {
  absl::StatusOr<Object> device = client_->AllocDevice();
  ASSERT_TRUE(device.ok());
  absl::StatusOr<Object> subdevice = client_->AllocSubdevice(*device);
  ASSERT_TRUE(subdevice.ok());
  absl::StatusOr<Object> usermode = client_->AllocUsermode(*subdevice);
  ASSERT_TRUE(usermode.ok());
  absl::StatusOr<Object> other = client_->AllocDevice(1);
  ASSERT_TRUE(other.ok());

  ASSERT_TRUE(device->Free().ok());
  EXPECT_FALSE(device->alive());
  EXPECT_FALSE(subdevice->alive());
  EXPECT_FALSE(usermode->alive());
  EXPECT_TRUE(other->alive());
  EXPECT_EQ(client_->object_count(), 1u);
  // The RM freed the children with their parent: one FREE went out, and none follows for them.
  EXPECT_THAT(Freed(rm_), ElementsAre(0xcf000000u));
  uint32_t value = 0;
  absl::Status control = client_->Control(*subdevice, 0x20800101, value);
  EXPECT_EQ(control.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(control.message(), HasSubstr("control 0x20800101 on object 0xcf000001, which is not one of its live "
                                           "objects"));
  EXPECT_THAT(subdevice->Free().message(), HasSubstr("object 0xcf000001 is not allocated (freed already, or with its "
                                                     "parent)"));
  absl::StatusOr<Object> orphan = client_->Alloc(0xcf000001, AMPERE_USERMODE_A, std::span<uint8_t>());
  EXPECT_THAT(orphan.status().message(), HasSubstr("cannot allocate class AMPERE_USERMODE_A (0xc561) under "
                                                   "0xcf000001, which is not allocated"));
  *usermode = Object();  // destroying a child freed with its parent sends nothing
  *subdevice = Object();
  EXPECT_THAT(Freed(rm_), ElementsAre(0xcf000000u));
}

TEST_F(ClientTest, AFailedFreeKeepsTheObject) {
  absl::StatusOr<Object> device = client_->AllocDevice();
  ASSERT_TRUE(device.ok());
  rm_.statuses = {regs::status::NV_ERR_STATE_IN_USE};
  absl::Status freed = device->Free();
  EXPECT_EQ(NvStatusOf(freed), regs::status::NV_ERR_STATE_IN_USE);
  EXPECT_TRUE(device->alive());
  // The destructor's failure cannot be returned; the client keeps it.
  rm_.statuses = {regs::status::NV_ERR_STATE_IN_USE};
  *device = Object();
  EXPECT_EQ(NvStatusOf(client_->deferred_free_status()), regs::status::NV_ERR_STATE_IN_USE);
}

TEST_F(ClientTest, HelpersCheckTheParentsClass) {
  absl::StatusOr<Object> device = client_->AllocDevice();
  ASSERT_TRUE(device.ok());
  absl::StatusOr<Object> compute = client_->AllocCompute(*device);
  EXPECT_EQ(compute.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(compute.status().message(),
              HasSubstr("a compute object needs a live AMPERE_CHANNEL_GPFIFO_A (0xc56f) as parent; object 0xcf000000 "
                        "is NV01_DEVICE_0 (0x80)"));
  NV_CHANNELGPFIFO_ALLOCATION_PARAMETERS params{};
  absl::StatusOr<Object> channel = client_->AllocGpfifoChannel(Object(), params);
  EXPECT_THAT(channel.status().message(), HasSubstr("needs a live KEPLER_CHANNEL_GROUP_A (0xa06c) or NV01_DEVICE_0 "
                                                    "(0x80) as parent"));
  EXPECT_EQ(rm_.calls.size(), 2u);  // root and device only
}

TEST_F(ClientTest, ObjectsThatOutliveTheirClientDoNothing) {
  absl::StatusOr<Object> device = client_->AllocDevice();
  ASSERT_TRUE(device.ok());
  Object kept = std::move(*device);
  EXPECT_FALSE(device->alive());  // moved from
  EXPECT_TRUE(kept.alive());
  client_.reset();  // frees the root, and with it the device, in the RM
  EXPECT_FALSE(kept.alive());
  EXPECT_THAT(kept.Free().message(), HasSubstr("its client is gone"));
  kept = Object();
  EXPECT_THAT(Freed(rm_), ElementsAre(0xc1d00000u));
}

TEST_F(ClientTest, AnRmErrorKeepsItsStatus) {
  absl::StatusOr<Object> device = client_->AllocDevice();
  ASSERT_TRUE(device.ok());
  rm_.statuses = {regs::status::NV_ERR_NOT_SUPPORTED};
  uint32_t value = 0;
  absl::Status control = client_->Control(*device, 0x800201, value);
  EXPECT_EQ(control.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(NvStatusOf(control), regs::status::NV_ERR_NOT_SUPPORTED);
}

}  // namespace
}  // namespace nv::rm
