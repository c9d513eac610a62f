// The RM classes the client allocates on AD102, by id: nv/regs/class_ids.h (the SDK's class headers nv/regs does not
// generate) and nv/regs' cl*_constants.h.
// Which class for which object on AD102 (nouveau's nv192_chipset: ga102 fifo, ad102 gr, ga102 ce, ga100 vfn):
// channels AMPERE_CHANNEL_GPFIFO_A (nvkm/engine/fifo/ga102.c), compute ADA_COMPUTE_A (engine/gr/ad102.c), copy
// AMPERE_DMA_COPY_B (engine/ce/ga102.c), usermode AMPERE_USERMODE_A (subdev/vfn/ga100.c).
#ifndef BAREGPU_NV_RM_CLASSES_H_
#define BAREGPU_NV_RM_CLASSES_H_

#include <cstdint>
#include <string>

#include "nv/regs/class_ids.h"
#include "nv/regs/clc561_constants.h"
#include "nv/regs/clc56f_constants.h"
#include "nv/regs/clc7b5_constants.h"
#include "nv/regs/clc9c0_constants.h"

namespace nv::rm {

using regs::cls::ADA_COMPUTE_A;
using regs::cls::AMPERE_CHANNEL_GPFIFO_A;
using regs::cls::AMPERE_DMA_COPY_B;
using regs::cls::AMPERE_USERMODE_A;
using regs::cls::FERMI_CONTEXT_SHARE_A;
using regs::cls::FERMI_VASPACE_A;
using regs::cls::KEPLER_CHANNEL_GROUP_A;
using regs::cls::NV01_DEVICE_0;
using regs::cls::NV01_ROOT;
using regs::cls::NV20_SUBDEVICE_0;

// "NV01_DEVICE_0 (0x80)"; a class not listed here prints as its number alone ("0xc797").
std::string ClassLabel(uint32_t class_id);

}  // namespace nv::rm

#endif  // BAREGPU_NV_RM_CLASSES_H_
