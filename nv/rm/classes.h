// The RM classes the client allocates on AD102, by id: the SDK's class headers (open-gpu-kernel-modules-535.113.01
// src/common/sdk/nvidia/inc/class/) for those nv/regs does not generate, nv/regs' cl*_constants.h for the rest.
// Which class for which object on AD102 (nouveau's nv192_chipset: ga102 fifo, ad102 gr, ga102 ce, ga100 vfn):
// channels AMPERE_CHANNEL_GPFIFO_A (nvkm/engine/fifo/ga102.c), compute ADA_COMPUTE_A (engine/gr/ad102.c), copy
// AMPERE_DMA_COPY_B (engine/ce/ga102.c), usermode AMPERE_USERMODE_A (subdev/vfn/ga100.c).
#ifndef BAREGPU_NV_RM_CLASSES_H_
#define BAREGPU_NV_RM_CLASSES_H_

#include <cstdint>
#include <string>

#include "nv/regs/clc561_constants.h"
#include "nv/regs/clc56f_constants.h"
#include "nv/regs/clc7b5_constants.h"
#include "nv/regs/clc9c0_constants.h"

namespace nv::rm {

inline constexpr uint32_t NV01_ROOT = 0x0;                  // cl0000.h
inline constexpr uint32_t NV01_DEVICE_0 = 0x80;             // cl0080.h
inline constexpr uint32_t NV20_SUBDEVICE_0 = 0x2080;        // cl2080.h
inline constexpr uint32_t FERMI_CONTEXT_SHARE_A = 0x9067;   // cl9067.h
inline constexpr uint32_t FERMI_VASPACE_A = 0x90f1;         // cl90f1.h
inline constexpr uint32_t KEPLER_CHANNEL_GROUP_A = 0xa06c;  // cla06c.h
using regs::cls::ADA_COMPUTE_A;
using regs::cls::AMPERE_CHANNEL_GPFIFO_A;
using regs::cls::AMPERE_DMA_COPY_B;
using regs::cls::AMPERE_USERMODE_A;

// "NV01_DEVICE_0 (0x80)"; a class not listed here prints as its number alone ("0xc797").
std::string ClassLabel(uint32_t class_id);

}  // namespace nv::rm

#endif  // BAREGPU_NV_RM_CLASSES_H_
