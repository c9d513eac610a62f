#include "nv/sim/rm_object_database.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nv/regs/clc461_constants.h"
#include "nv/regs/clc561_constants.h"
#include "nv/regs/clc56f_constants.h"
#include "nv/regs/clc7b5_constants.h"
#include "nv/regs/clc9c0_constants.h"
#include "nv/regs/status_constants.h"

namespace nv::sim {
namespace {

using namespace rm_class;  // NOLINT(build/namespaces): the class names read as in the headers
using regs::cls::ADA_COMPUTE_A;
using regs::cls::AMPERE_CHANNEL_GPFIFO_A;
using regs::cls::AMPERE_DMA_COPY_B;
using regs::cls::AMPERE_USERMODE_A;
using regs::cls::TURING_USERMODE_A;
namespace status = regs::status;

// Allocation parameter sizes: sizeof the SDK structure (open-gpu-kernel-modules 535.113.01
// src/common/sdk/nvidia/inc/), measured with gcc on x86-64 against the vendored headers.
constexpr uint32_t kNv0000AllocParametersSize = 108;   // class/cl0000.h NV0000_ALLOC_PARAMETERS
constexpr uint32_t kNv0080AllocParametersSize = 56;    // class/cl0080.h NV0080_ALLOC_PARAMETERS
constexpr uint32_t kNv2080AllocParametersSize = 4;     // class/cl2080.h NV2080_ALLOC_PARAMETERS
constexpr uint32_t kVaspaceParametersSize = 48;        // nvos.h NV_VASPACE_ALLOCATION_PARAMETERS
constexpr uint32_t kChannelGroupParametersSize = 20;   // nvos.h NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS
constexpr uint32_t kCtxShareParametersSize = 12;       // nvos.h NV_CTXSHARE_ALLOCATION_PARAMETERS
constexpr uint32_t kChannelAllocParamsSize = 360;      // alloc/alloc_channel.h NV_CHANNEL_ALLOC_PARAMS
constexpr uint32_t kMemoryAllocationParamsSize = 120;  // nvos.h NV_MEMORY_ALLOCATION_PARAMS
constexpr uint32_t kGrAllocationParametersSize = 16;   // nvos.h NV_GR_ALLOCATION_PARAMETERS
constexpr uint32_t kCopyAllocationParametersSize = 8;  // class/clb0b5sw.h NVB0B5_ / clc0b5sw.h NVC0B5_ALLOCATION_...

// Handles inside the parameters the model follows (offsets measured as above).
constexpr size_t kChannelGroupHVaspace = 8;   // NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS.hVASpace
constexpr size_t kCtxShareHVaspace = 0;       // NV_CTXSHARE_ALLOCATION_PARAMETERS.hVASpace
constexpr size_t kChannelHContextShare = 24;  // NV_CHANNEL_ALLOC_PARAMS.hContextShare
constexpr size_t kChannelHVaspace = 28;       // NV_CHANNEL_ALLOC_PARAMS.hVASpace
constexpr size_t kChannelGpFifoEntries = 16;  // NV_CHANNEL_ALLOC_PARAMS.gpFifoEntries

// Parents. A client's objects hang from the client (its root object); nouveau's r535 code and tinygrad allocate:
// the device under the client (r535_gsp_device_ctor; ops_nv.py), the subdevice under the device
// (r535_gsp_subdevice_ctor), the VA space under the device (mmu/r535.c r535_mmu_vaspace_new; NV_GSP.init_golden_image),
// a channel group under the device and a context share under the channel group (ops_nv.py NVDevice.__init__), a
// GPFIFO channel under the device (fifo/r535.c r535_chan_ramfc_write, init_golden_image) or the channel group
// (ops_nv.py _new_gpu_fifo), compute and copy objects under the channel (gr/r535.c r535_gr_obj_ctor,
// ce/r535.c r535_ce_obj_ctor, init_golden_image), usermode under the subdevice (ops_nv.py setup_usermode) and
// memory under the device (ops_nv.py _gpu_alloc).
constexpr uint32_t kRootParents[] = {NV01_ROOT, NV01_ROOT_CLIENT};
constexpr uint32_t kDeviceParents[] = {NV01_DEVICE_0};
constexpr uint32_t kSubdeviceParents[] = {NV20_SUBDEVICE_0};
constexpr uint32_t kChannelGroupParents[] = {KEPLER_CHANNEL_GROUP_A};
constexpr uint32_t kChannelParents[] = {NV01_DEVICE_0, KEPLER_CHANNEL_GROUP_A};
constexpr uint32_t kEngineParents[] = {AMPERE_CHANNEL_GPFIFO_A};

constexpr uint32_t kRootSizes[] = {kNv0000AllocParametersSize};
constexpr uint32_t kDeviceSizes[] = {kNv0080AllocParametersSize};
constexpr uint32_t kSubdeviceSizes[] = {kNv2080AllocParametersSize};
constexpr uint32_t kVaspaceSizes[] = {kVaspaceParametersSize};
constexpr uint32_t kChannelGroupSizes[] = {kChannelGroupParametersSize};
constexpr uint32_t kCtxShareSizes[] = {kCtxShareParametersSize};
constexpr uint32_t kChannelSizes[] = {kChannelAllocParamsSize};
constexpr uint32_t kMemorySizes[] = {kMemoryAllocationParamsSize};
// nouveau's r535_gr_obj_ctor and tinygrad allocate compute with no parameters; RM's NV_GR_ALLOCATION_PARAMETERS
// is optional.
constexpr uint32_t kComputeSizes[] = {0, kGrAllocationParametersSize};
// nouveau's r535_ce_obj_ctor sends NVC0B5_ALLOCATION_PARAMETERS, tinygrad none.
constexpr uint32_t kCopySizes[] = {0, kCopyAllocationParametersSize};
// tinygrad's setup_usermode allocates AMPERE/TURING usermode with no parameters (NV_HOPPER_USERMODE_A_PARAMS is
// HOPPER_USERMODE_A's).
constexpr uint32_t kNoParams[] = {0};

constexpr RmClassInfo kClasses[] = {
    {NV01_ROOT, "NV01_ROOT", {}, kRootSizes, "NV0000_ALLOC_PARAMETERS"},
    {NV01_ROOT_CLIENT, "NV01_ROOT_CLIENT", {}, kRootSizes, "NV0000_ALLOC_PARAMETERS"},
    {NV01_DEVICE_0, "NV01_DEVICE_0", kRootParents, kDeviceSizes, "NV0080_ALLOC_PARAMETERS"},
    {NV20_SUBDEVICE_0, "NV20_SUBDEVICE_0", kDeviceParents, kSubdeviceSizes, "NV2080_ALLOC_PARAMETERS"},
    {FERMI_VASPACE_A, "FERMI_VASPACE_A", kDeviceParents, kVaspaceSizes, "NV_VASPACE_ALLOCATION_PARAMETERS"},
    {NV01_MEMORY_SYSTEM, "NV01_MEMORY_SYSTEM", kDeviceParents, kMemorySizes, "NV_MEMORY_ALLOCATION_PARAMS"},
    {NV01_MEMORY_LOCAL_USER, "NV01_MEMORY_LOCAL_USER", kDeviceParents, kMemorySizes, "NV_MEMORY_ALLOCATION_PARAMS"},
    {KEPLER_CHANNEL_GROUP_A, "KEPLER_CHANNEL_GROUP_A", kDeviceParents, kChannelGroupSizes,
     "NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS"},
    {FERMI_CONTEXT_SHARE_A, "FERMI_CONTEXT_SHARE_A", kChannelGroupParents, kCtxShareSizes,
     "NV_CTXSHARE_ALLOCATION_PARAMETERS"},
    {AMPERE_CHANNEL_GPFIFO_A, "AMPERE_CHANNEL_GPFIFO_A", kChannelParents, kChannelSizes, "NV_CHANNEL_ALLOC_PARAMS"},
    {ADA_COMPUTE_A, "ADA_COMPUTE_A", kEngineParents, kComputeSizes, "NV_GR_ALLOCATION_PARAMETERS"},
    {AMPERE_DMA_COPY_B, "AMPERE_DMA_COPY_B", kEngineParents, kCopySizes, "NVB0B5_ALLOCATION_PARAMETERS"},
    {AMPERE_USERMODE_A, "AMPERE_USERMODE_A", kSubdeviceParents, kNoParams, "(none)"},
    {TURING_USERMODE_A, "TURING_USERMODE_A", kSubdeviceParents, kNoParams, "(none)"},
};

std::string ClassLabel(uint32_t class_id) {
  const RmClassInfo* info = RmObjectDatabase::FindClass(class_id);
  return info ? absl::StrFormat("%s (%#x)", info->name, class_id) : absl::StrFormat("class %#x", class_id);
}

uint32_t Load32(std::span<const uint8_t> bytes, size_t offset) {
  uint32_t v = 0;
  if (offset + sizeof(v) <= bytes.size()) std::memcpy(&v, bytes.data() + offset, sizeof(v));
  return v;
}

RmResult Refuse(uint32_t status, std::string message) { return RmResult{status, std::move(message)}; }

}  // namespace

const RmClassInfo* RmObjectDatabase::FindClass(uint32_t class_id) {
  for (const RmClassInfo& c : kClasses) {
    if (c.id == class_id) return &c;
  }
  return nullptr;
}

const RmObjectDatabase::Object* RmObjectDatabase::Find(uint32_t hClient, uint32_t handle) const {
  auto client = clients_.find(hClient);
  if (client == clients_.end()) return nullptr;
  auto object = client->second.objects.find(handle);
  return object == client->second.objects.end() ? nullptr : &object->second;
}

size_t RmObjectDatabase::size() const {
  size_t n = 0;
  for (const auto& [handle, client] : clients_) n += client.objects.size();
  return n;
}

RmResult RmObjectDatabase::CheckReferenced(const Client& client, uint32_t handle, uint32_t want,
                                           const char* what) const {
  if (handle == 0) return {};
  auto it = client.objects.find(handle);
  if (it == client.objects.end() || it->second.class_id != want) {
    // NV_ERR_INVALID_OBJECT_HANDLE: "Object handle is not valid".
    return Refuse(
        status::NV_ERR_INVALID_OBJECT_HANDLE,
        absl::StrFormat(
            "%s %#x is not a %s of the client%s", what, handle, ClassLabel(want),
            it == client.objects.end() ? "" : absl::StrCat(" (it is ", ClassLabel(it->second.class_id), ")")));
  }
  return {};
}

RmResult RmObjectDatabase::Alloc(uint32_t hClient, uint32_t hParent, uint32_t hObject, uint32_t hClass,
                                 std::span<const uint8_t> params) {
  const RmClassInfo* info = FindClass(hClass);
  // NV_ERR_INVALID_CLASS: "Given class-id not valid"; the model allocates only the classes a compute client needs.
  if (info == nullptr) {
    return Refuse(status::NV_ERR_INVALID_CLASS,
                  absl::StrFormat("GSP_RM_ALLOC of class %#x (client %#x, object %#x): not a class the virtual "
                                  "AD102's RM allocates",
                                  hClass, hClient, hObject));
  }
  // NV_ERR_INVALID_PARAM_STRUCT: "Invalid structure parameter" (paramsSize is not the class's structure).
  if (std::find(info->params_sizes.begin(), info->params_sizes.end(), params.size()) == info->params_sizes.end()) {
    std::string sizes;
    for (uint32_t s : info->params_sizes) absl::StrAppend(&sizes, sizes.empty() ? "" : " or ", s);
    return Refuse(status::NV_ERR_INVALID_PARAM_STRUCT,
                  absl::StrFormat("GSP_RM_ALLOC of %s (client %#x, object %#x): paramsSize %u, expected %s (sizeof %s)",
                                  ClassLabel(hClass), hClient, hObject, params.size(), sizes, info->params_struct));
  }

  if (info->parents.empty()) {
    // A client. tinygrad (NV_GSP.init_golden_image) names the new client in hClient with hParent 0 and an unrelated
    // hObject; nouveau (r535_gsp_client_ctor) sends the same handle in hClient, hParent and hObject.
    if (hClient == 0) {
      // NV_ERR_INVALID_OBJECT_NEW: "New object is not valid".
      return Refuse(status::NV_ERR_INVALID_OBJECT_NEW,
                    absl::StrFormat("GSP_RM_ALLOC of %s: client handle 0", ClassLabel(hClass)));
    }
    if (hParent != 0 && hParent != hClient) {
      return Refuse(status::NV_ERR_INVALID_OBJECT_PARENT,
                    absl::StrFormat("GSP_RM_ALLOC of %s %#x: hParent %#x (a client has none: 0 or its own handle)",
                                    ClassLabel(hClass), hClient, hParent));
    }
    if (clients_.contains(hClient)) {
      // NV_ERR_INSERT_DUPLICATE_NAME: "Found a duplicate entry in the requested btree" (RM keeps handles in one).
      return Refuse(status::NV_ERR_INSERT_DUPLICATE_NAME,
                    absl::StrFormat("GSP_RM_ALLOC of %s: client %#x exists", ClassLabel(hClass), hClient));
    }
    clients_[hClient].objects[hClient] = Object{hClient, hClass, 0, 0};
    return {};
  }

  auto client_it = clients_.find(hClient);
  if (client_it == clients_.end()) {
    // NV_ERR_INVALID_CLIENT: "Given client not valid".
    return Refuse(status::NV_ERR_INVALID_CLIENT,
                  absl::StrFormat("GSP_RM_ALLOC of %s %#x: no client %#x", ClassLabel(hClass), hObject, hClient));
  }
  Client& client = client_it->second;
  auto parent_it = client.objects.find(hParent);
  if (parent_it == client.objects.end()) {
    // NV_ERR_INVALID_OBJECT_PARENT: "Object parent is not valid".
    return Refuse(status::NV_ERR_INVALID_OBJECT_PARENT,
                  absl::StrFormat("GSP_RM_ALLOC of %s %#x: parent %#x is not an object of client %#x",
                                  ClassLabel(hClass), hObject, hParent, hClient));
  }
  const uint32_t parent_class = parent_it->second.class_id;
  if (std::find(info->parents.begin(), info->parents.end(), parent_class) == info->parents.end()) {
    std::string allowed;
    for (uint32_t p : info->parents) absl::StrAppend(&allowed, allowed.empty() ? "" : " or ", ClassLabel(p));
    return Refuse(status::NV_ERR_INVALID_OBJECT_PARENT,
                  absl::StrFormat("GSP_RM_ALLOC of %s %#x: parent %#x is a %s, expected %s", ClassLabel(hClass),
                                  hObject, hParent, ClassLabel(parent_class), allowed));
  }
  if (hObject == 0) {
    return Refuse(status::NV_ERR_INVALID_OBJECT_NEW,
                  absl::StrFormat("GSP_RM_ALLOC of %s under %#x: object handle 0", ClassLabel(hClass), hParent));
  }
  if (client.objects.contains(hObject)) {
    return Refuse(status::NV_ERR_INSERT_DUPLICATE_NAME,
                  absl::StrFormat("GSP_RM_ALLOC of %s: handle %#x is already a %s of client %#x", ClassLabel(hClass),
                                  hObject, ClassLabel(client.objects[hObject].class_id), hClient));
  }

  // Handles the parameters name must be objects of the right class in the same client.
  RmResult referenced;
  Object object{hObject, hClass, hParent, 0};
  switch (hClass) {
    case KEPLER_CHANNEL_GROUP_A:
      referenced = CheckReferenced(client, Load32(params, kChannelGroupHVaspace), FERMI_VASPACE_A,
                                   "NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS.hVASpace");
      break;
    case FERMI_CONTEXT_SHARE_A:
      referenced = CheckReferenced(client, Load32(params, kCtxShareHVaspace), FERMI_VASPACE_A,
                                   "NV_CTXSHARE_ALLOCATION_PARAMETERS.hVASpace");
      break;
    case AMPERE_CHANNEL_GPFIFO_A:
      referenced = CheckReferenced(client, Load32(params, kChannelHContextShare), FERMI_CONTEXT_SHARE_A,
                                   "NV_CHANNEL_ALLOC_PARAMS.hContextShare");
      if (referenced.ok()) {
        referenced = CheckReferenced(client, Load32(params, kChannelHVaspace), FERMI_VASPACE_A,
                                     "NV_CHANNEL_ALLOC_PARAMS.hVASpace");
      }
      // A channel with no GPFIFO entries cannot fetch anything (NV_ERR_INVALID_ARGUMENT: "Invalid argument to call").
      if (referenced.ok() && Load32(params, kChannelGpFifoEntries) == 0) {
        referenced = Refuse(status::NV_ERR_INVALID_ARGUMENT, "NV_CHANNEL_ALLOC_PARAMS.gpFifoEntries is 0");
      }
      object.channel_id = next_channel_id_;
      break;
    default:
      break;
  }
  if (!referenced.ok()) {
    referenced.message = absl::StrFormat("GSP_RM_ALLOC of %s %#x (client %#x): %s", ClassLabel(hClass), hObject,
                                         hClient, referenced.message);
    return referenced;
  }
  if (hClass == AMPERE_CHANNEL_GPFIFO_A) ++next_channel_id_;
  client.objects[hObject] = object;
  return {};
}

RmResult RmObjectDatabase::Free(uint32_t hClient, uint32_t hObject) {
  auto client_it = clients_.find(hClient);
  if (client_it == clients_.end()) {
    return Refuse(status::NV_ERR_INVALID_CLIENT,
                  absl::StrFormat("FREE of object %#x: no client %#x", hObject, hClient));
  }
  if (hObject == hClient) {
    clients_.erase(client_it);
    return {};
  }
  auto& objects = client_it->second.objects;
  if (!objects.contains(hObject)) {
    return Refuse(status::NV_ERR_INVALID_OBJECT_HANDLE,
                  absl::StrFormat("FREE of object %#x: not an object of client %#x", hObject, hClient));
  }
  // The object and its descendants: repeat until no object's parent is gone (the tree is shallow).
  std::vector<uint32_t> doomed = {hObject};
  for (size_t i = 0; i < doomed.size(); ++i) {
    for (const auto& [handle, object] : objects) {
      if (object.parent == doomed[i] && handle != hClient) doomed.push_back(handle);
    }
  }
  for (uint32_t handle : doomed) objects.erase(handle);
  return {};
}

}  // namespace nv::sim
