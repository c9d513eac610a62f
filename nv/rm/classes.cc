#include "nv/rm/classes.h"

#include "absl/strings/str_format.h"

namespace nv::rm {

std::string ClassLabel(uint32_t class_id) {
  const char* name = nullptr;
  switch (class_id) {
    case NV01_ROOT:
      name = "NV01_ROOT";
      break;
    case NV01_DEVICE_0:
      name = "NV01_DEVICE_0";
      break;
    case NV20_SUBDEVICE_0:
      name = "NV20_SUBDEVICE_0";
      break;
    case FERMI_CONTEXT_SHARE_A:
      name = "FERMI_CONTEXT_SHARE_A";
      break;
    case FERMI_VASPACE_A:
      name = "FERMI_VASPACE_A";
      break;
    case KEPLER_CHANNEL_GROUP_A:
      name = "KEPLER_CHANNEL_GROUP_A";
      break;
    case ADA_COMPUTE_A:
      name = "ADA_COMPUTE_A";
      break;
    case AMPERE_CHANNEL_GPFIFO_A:
      name = "AMPERE_CHANNEL_GPFIFO_A";
      break;
    case AMPERE_DMA_COPY_B:
      name = "AMPERE_DMA_COPY_B";
      break;
    case AMPERE_USERMODE_A:
      name = "AMPERE_USERMODE_A";
      break;
    default:
      break;
  }
  return name ? absl::StrFormat("%s (%#x)", name, class_id) : absl::StrFormat("%#x", class_id);
}

}  // namespace nv::rm
