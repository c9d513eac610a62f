// GSP-RM's resource server in the virtual AD102: the RM objects clients allocate over GSP_RM_ALLOC and free over
// FREE, by client and handle, each under a parent of the class its own class requires, with the allocation
// parameters its class defines.
//
// GSP-RM's resource server is not public (RM's resserv and its generated resource list are not in the vendored
// subset). What is modelled is what the public headers and the two drivers fix: the class ids (the SDK's cl*.h), the
// allocation parameter structures and their sizes (the SDK's cl*.h, nvos.h, alloc/alloc_channel.h, measured with gcc
// against the vendored open-gpu-kernel-modules 535.113.01 headers), the parents Linux 6.12 nouveau's r535 code and
// tinygrad's NV driver allocate each class under, and the NV_STATUS codes (nvstatuscodes.h) chosen by their
// meaning. Which status RM gives for each refusal is the model's reading of the codes' descriptions; each is named in
// rm_object_database.cc beside its check.
#ifndef BAREGPU_NV_SIM_RM_OBJECT_DATABASE_H_
#define BAREGPU_NV_SIM_RM_OBJECT_DATABASE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "nv/regs/class_ids.h"

namespace nv::sim {

// Class ids: nv/regs/class_ids.h and nv/regs' generated cl*_constants.h.
namespace rm_class = ::nv::regs::cls;

// One class the model can allocate.
struct RmClassInfo {
  uint32_t id;
  const char* name;
  std::span<const uint32_t> parents;       // classes its parent may have; empty: a client (no parent object)
  std::span<const uint32_t> params_sizes;  // the paramsSize values accepted (0: no parameters)
  const char* params_struct;               // the structure's name, for messages
};

// An NV_STATUS and, when not NV_OK, what was wrong (recorded by the caller).
struct RmResult {
  uint32_t status = 0;
  std::string message;
  bool ok() const { return status == 0; }
};

class RmObjectDatabase {
 public:
  struct Object {
    uint32_t handle = 0;
    uint32_t class_id = 0;
    uint32_t parent = 0;  // 0 for a client
    // Class-specific: a channel's id (GPFIFO classes), handed out in allocation order per database.
    uint32_t channel_id = 0;
  };

  // The classes the model allocates, and their rules; nullptr for any other.
  static const RmClassInfo* FindClass(uint32_t class_id);

  // GSP_RM_ALLOC: a client (NV01_ROOT / NV01_ROOT_CLIENT: the client's handle is hClient, hParent 0 or hClient)
  // or an object `hObject` of `hClass` under `hParent` of client `hClient`. Nothing changes unless the status is
  // NV_OK.
  RmResult Alloc(uint32_t hClient, uint32_t hParent, uint32_t hObject, uint32_t hClass,
                 std::span<const uint8_t> params);
  // FREE (NVOS00_PARAMETERS): `hObject` and everything allocated under it; the client itself when hObject is
  // hClient.
  RmResult Free(uint32_t hClient, uint32_t hObject);

  const Object* Find(uint32_t hClient, uint32_t handle) const;
  // Objects of every client, clients included.
  size_t size() const;

 private:
  struct Client {
    absl::flat_hash_map<uint32_t, Object> objects;  // the client's own root object included
  };
  // Checks that a handle named in allocation parameters is an object of `want` in the client; 0 is "none".
  RmResult CheckReferenced(const Client& client, uint32_t handle, uint32_t want, const char* what) const;

  absl::flat_hash_map<uint32_t, Client> clients_;
  uint32_t next_channel_id_ = 0;
};

}  // namespace nv::sim

#endif  // BAREGPU_NV_SIM_RM_OBJECT_DATABASE_H_
