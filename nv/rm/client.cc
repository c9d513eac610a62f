#include "nv/rm/client.h"

#include <cstring>
#include <initializer_list>
#include <set>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "nv/rm/classes.h"

namespace nv::rm {
namespace internal {

struct ObjectRecord {
  Handle parent = kNullObject;
  uint32_t class_id = 0;
};

// What a Client and its Objects share; the Objects hold it weakly, so one that outlives its client does nothing.
struct ClientState {
  explicit ClientState(Transport& transport) : transport(transport) {}

  bool Has(Handle handle) const { return objects.contains(handle); }

  // Frees `handle` through the transport and forgets it and everything allocated under it.
  absl::Status Free(Handle handle) {
    auto it = objects.find(handle);
    if (it == objects.end()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "RM client %#x: object %#x is not allocated (freed already, or with its parent)", client, handle));
    }
    BAREGPU_RETURN_IF_ERROR(transport.Free(client, it->second.parent, handle));
    // Children have larger handles than their parents (handles only grow), so one pass in handle order finds every
    // descendant.
    std::set<Handle> gone = {handle};
    for (const auto& [h, record] : objects) {
      if (gone.contains(record.parent)) gone.insert(h);
    }
    for (Handle h : gone) objects.erase(h);
    return absl::OkStatus();
  }

  Transport& transport;
  Handle client = kNullObject;
  bool root_alive = false;
  Handle next_handle = kFirstObjectHandle;
  std::map<Handle, ObjectRecord> objects;  // live objects under the root
  absl::Status deferred_free_status;
};

}  // namespace internal

Object::Object(Object&& other) noexcept
    : state_(std::move(other.state_)), handle_(other.handle_), class_id_(other.class_id_), parent_(other.parent_) {
  other.handle_ = kNullObject;
}

Object& Object::operator=(Object&& other) noexcept {
  if (this != &other) {
    Release();
    state_ = std::move(other.state_);
    handle_ = other.handle_;
    class_id_ = other.class_id_;
    parent_ = other.parent_;
    other.handle_ = kNullObject;
  }
  return *this;
}

Object::~Object() { Release(); }

void Object::Release() {
  std::shared_ptr<internal::ClientState> state = state_.lock();
  if (state && handle_ != kNullObject && state->Has(handle_)) {
    absl::Status freed = state->Free(handle_);
    if (!freed.ok() && state->deferred_free_status.ok()) state->deferred_free_status = freed;
  }
  state_.reset();
}

bool Object::alive() const {
  std::shared_ptr<internal::ClientState> state = state_.lock();
  return state && handle_ != kNullObject && state->Has(handle_);
}

absl::Status Object::Free() {
  std::shared_ptr<internal::ClientState> state = state_.lock();
  if (!state || handle_ == kNullObject) {
    return absl::FailedPreconditionError(
        absl::StrFormat("RM object %#x: its client is gone, or the Object is empty", handle_));
  }
  return state->Free(handle_);
}

absl::StatusOr<std::unique_ptr<Client>> Client::Create(Transport& transport, uint32_t index) {
  if (index > kMaxClientIndex) {
    return absl::InvalidArgumentError(absl::StrFormat("RM client index %u: client handles are %#x | an index up to %#x",
                                                      index, kClientHandleBase, kMaxClientIndex));
  }
  auto state = std::make_shared<internal::ClientState>(transport);
  state->client = kClientHandleBase | index;
  NV0000_ALLOC_PARAMETERS params{};
  params.hClient = state->client;
  params.processID = kKernelProcessId;
  BAREGPU_ASSIGN_OR_RETURN(Handle root,
                           transport.Alloc(state->client, state->client, state->client, NV01_ROOT,
                                           std::span(reinterpret_cast<uint8_t*>(&params), sizeof(params))));
  // The kernel RM may hand out a client handle of its own (NVOS64 hObjectNew: "0 to generate"); GSP-RM keeps ours.
  if (root == kNullObject) {
    return absl::InternalError(
        absl::StrFormat("%s allocated RM client %#x as NV01_NULL_OBJECT", transport.name(), state->client));
  }
  state->client = root;
  state->root_alive = true;
  return std::unique_ptr<Client>(new Client(std::move(state)));
}

Client::~Client() {
  // The RM frees every object of a client with the client (nouveau frees the client object alone).
  if (state_->root_alive) (void)state_->transport.Free(state_->client, kNullObject, state_->client);
  state_->objects.clear();
}

Handle Client::handle() const { return state_->client; }
size_t Client::object_count() const { return state_->objects.size(); }
absl::Status Client::deferred_free_status() const { return state_->deferred_free_status; }

absl::StatusOr<Object> Client::Alloc(Handle parent, uint32_t class_id, std::span<uint8_t> params) {
  internal::ClientState& s = *state_;
  if (parent != s.client && !s.Has(parent)) {
    return absl::FailedPreconditionError(
        absl::StrFormat("RM client %#x: cannot allocate class %s under %#x, which is not allocated", s.client,
                        ClassLabel(class_id), parent));
  }
  if (s.next_handle == kNullObject) {
    return absl::ResourceExhaustedError(absl::StrFormat("RM client %#x: out of object handles", s.client));
  }
  const Handle handle = s.next_handle;
  // Taken even if the allocation fails: the RM may have half-made it, and a handle is never given twice.
  s.next_handle = handle == 0xffffffff ? kNullObject : handle + 1;
  BAREGPU_ASSIGN_OR_RETURN(Handle made, s.transport.Alloc(s.client, parent, handle, class_id, params));
  if (made != handle) {
    return absl::InternalError(
        absl::StrFormat("RM client %#x: %s allocated object %#x as %#x", s.client, s.transport.name(), handle, made));
  }
  s.objects[handle] = internal::ObjectRecord{parent, class_id};
  return Object(state_, handle, class_id, parent);
}

absl::Status Client::Control(const Object& object, uint32_t cmd, std::span<uint8_t> params) {
  if (!object.alive() || object.state_.lock() != state_) {
    return absl::FailedPreconditionError(
        absl::StrFormat("RM client %#x: control %#x on object %#x, which is not one of its live objects",
                        state_->client, cmd, object.handle()));
  }
  return state_->transport.Control(state_->client, object.handle(), cmd, params);
}

namespace {

// The parent a typed helper needs: one of `classes`, alive.
absl::Status ExpectParent(const Object& parent, const char* what, std::initializer_list<uint32_t> classes) {
  for (uint32_t c : classes) {
    if (parent.class_id() == c && parent.alive()) return absl::OkStatus();
  }
  std::string expected;
  for (uint32_t c : classes) expected += (expected.empty() ? "" : " or ") + ClassLabel(c);
  return absl::InvalidArgumentError(absl::StrFormat("%s needs a live %s as parent; object %#x is %s%s", what, expected,
                                                    parent.handle(), ClassLabel(parent.class_id()),
                                                    parent.alive() ? "" : ", not alive"));
}

}  // namespace

absl::StatusOr<Object> Client::AllocDevice(uint32_t device_id) {
  NV0080_ALLOC_PARAMETERS params{};
  params.deviceId = device_id;
  params.hClientShare = state_->client;
  params.vaMode = NV_DEVICE_ALLOCATION_VAMODE_OPTIONAL_MULTIPLE_VASPACES;
  return Alloc(state_->client, NV01_DEVICE_0, params);
}

absl::StatusOr<Object> Client::AllocSubdevice(const Object& device, uint32_t subdevice_id) {
  BAREGPU_RETURN_IF_ERROR(ExpectParent(device, "a subdevice", {NV01_DEVICE_0}));
  NV2080_ALLOC_PARAMETERS params{};
  params.subDeviceId = subdevice_id;
  return Alloc(device.handle(), NV20_SUBDEVICE_0, params);
}

absl::StatusOr<Object> Client::AllocVaSpace(const Object& device, NV_VASPACE_ALLOCATION_PARAMETERS& params) {
  BAREGPU_RETURN_IF_ERROR(ExpectParent(device, "a VA space", {NV01_DEVICE_0}));
  return Alloc(device.handle(), FERMI_VASPACE_A, params);
}

absl::StatusOr<Object> Client::AllocChannelGroup(const Object& device, NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS& params) {
  BAREGPU_RETURN_IF_ERROR(ExpectParent(device, "a channel group", {NV01_DEVICE_0}));
  return Alloc(device.handle(), KEPLER_CHANNEL_GROUP_A, params);
}

absl::StatusOr<Object> Client::AllocContextShare(const Object& channel_group,
                                                 NV_CTXSHARE_ALLOCATION_PARAMETERS& params) {
  BAREGPU_RETURN_IF_ERROR(ExpectParent(channel_group, "a context share", {KEPLER_CHANNEL_GROUP_A}));
  return Alloc(channel_group.handle(), FERMI_CONTEXT_SHARE_A, params);
}

absl::StatusOr<Object> Client::AllocGpfifoChannel(const Object& parent,
                                                  NV_CHANNELGPFIFO_ALLOCATION_PARAMETERS& params) {
  BAREGPU_RETURN_IF_ERROR(ExpectParent(parent, "a GPFIFO channel", {KEPLER_CHANNEL_GROUP_A, NV01_DEVICE_0}));
  return Alloc(parent.handle(), AMPERE_CHANNEL_GPFIFO_A, params);
}

absl::StatusOr<Object> Client::AllocCompute(const Object& channel) {
  BAREGPU_RETURN_IF_ERROR(ExpectParent(channel, "a compute object", {AMPERE_CHANNEL_GPFIFO_A}));
  return Alloc(channel.handle(), ADA_COMPUTE_A, std::span<uint8_t>());
}

absl::StatusOr<Object> Client::AllocCopy(const Object& channel, uint32_t copy_engine) {
  BAREGPU_RETURN_IF_ERROR(ExpectParent(channel, "a copy object", {AMPERE_CHANNEL_GPFIFO_A}));
  NVC0B5_ALLOCATION_PARAMETERS params{};
  params.version = NVC0B5_ALLOCATION_PARAMETERS_VERSION_1;
  params.engineType = NV2080_ENGINE_TYPE_COPY0 + copy_engine;
  return Alloc(channel.handle(), AMPERE_DMA_COPY_B, params);
}

absl::StatusOr<Object> Client::AllocUsermode(const Object& subdevice) {
  BAREGPU_RETURN_IF_ERROR(ExpectParent(subdevice, "a usermode object", {NV20_SUBDEVICE_0}));
  return Alloc(subdevice.handle(), AMPERE_USERMODE_A, std::span<uint8_t>());
}

}  // namespace nv::rm
