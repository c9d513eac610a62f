// The ids of the RM classes whose headers the generated nv/regs/cl*_constants.h do not cover (their class headers
// carry no methods): open-gpu-kernel-modules 535.113.01 src/common/sdk/nvidia/inc/class/, one file per class. Written
// by hand; each id is the file's `#define NAME (0x...)`. The driver's RM client (nv/rm) and the virtual GSP-RM's object
// database (nv/sim) both name classes through here.
#ifndef BAREGPU_NV_REGS_CLASS_IDS_H_
#define BAREGPU_NV_REGS_CLASS_IDS_H_

#include <cstdint>

namespace nv::regs::cls {

inline constexpr uint32_t NV01_ROOT = 0x0;                  // cl0000.h
inline constexpr uint32_t NV01_MEMORY_SYSTEM = 0x3e;        // cl003e.h
inline constexpr uint32_t NV01_MEMORY_LOCAL_USER = 0x40;    // cl0040.h
inline constexpr uint32_t NV01_ROOT_CLIENT = 0x41;          // cl0041.h
inline constexpr uint32_t NV01_DEVICE_0 = 0x80;             // cl0080.h
inline constexpr uint32_t NV20_SUBDEVICE_0 = 0x2080;        // cl2080.h
inline constexpr uint32_t FERMI_CONTEXT_SHARE_A = 0x9067;   // cl9067.h
inline constexpr uint32_t FERMI_VASPACE_A = 0x90f1;         // cl90f1.h
inline constexpr uint32_t KEPLER_CHANNEL_GROUP_A = 0xa06c;  // cla06c.h

}  // namespace nv::regs::cls

#endif  // BAREGPU_NV_REGS_CLASS_IDS_H_
