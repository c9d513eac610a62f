// GSP-RM as the driver boots it and talks to it: the system memory its boot reads and the message queues. Laid out and
// filled as Linux 6.12 nouveau's r535 code does (r535_gsp_oneinit, r535_gsp_libos_init, r535_gsp_shared_init,
// r535_gsp_rmargs_init, r535_gsp_wpr_meta_init, nvkm_gsp_radix3_sg), with nv/gsp's builders:
//
//   LibOS arguments   one page: LOGINIT, LOGINTR, LOGRM (64 KiB log buffers, each with its PTEs after the put
//                     pointer) and RMARGS (GSP_ARGUMENTS_CACHED: the queues' MESSAGE_QUEUE_INIT_ARGUMENTS); its bus
//                     address goes to the GSP falcon's MAILBOX0/1
//   message queues    nv/gsp/message_queue: the page table, the command queue, the status queue
//   radix3            the GSP-RM ELF's .fwimage in pages, and its three-level table
//   bootloader        the bootloader file's payload; the chip's .fwsignature_* section
//   WPR metadata      GspFwWprMeta: where all of the above is and the WPR2 layout; its bus address goes to the booter
//
// The queue is the driver's one channel to GSP-RM: SET_SYSTEM_INFO and SET_REGISTRY queued before the boot, INIT_DONE
// (with the CPU sequencer GSP-RM asks for on the way), GET_GSP_STATIC_INFO, RPCs, UNLOADING_GUEST_DRIVER at the end.
#ifndef BAREGPU_NV_GSP_RM_H_
#define BAREGPU_NV_GSP_RM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "firmware/nv/gsp_elf.h"
#include "firmware/nv/riscv_desc.h"
#include "nv/gsp/boot_args.h"
#include "nv/gsp/cpu_sequencer.h"
#include "nv/gsp/fb_layout.h"
#include "nv/gsp/layouts.h"
#include "nv/gsp/message_queue.h"
#include "pci/device.h"

namespace nv {

class GspRm {
 public:
  // The parsed files and their bytes (firmware/nv), and the chip's signature section (".fwsignature_ad10x").
  struct Firmware {
    const firmware::nv::Bootloader* bootloader = nullptr;
    absl::string_view bootloader_file;
    const firmware::nv::GspImage* image = nullptr;
    absl::string_view image_file;
    std::string signature_section;
  };

  // Allocates and fills the boot's system memory; `bar0` rings the doorbell.
  static absl::StatusOr<std::unique_ptr<GspRm>> Prepare(pci::Device& pci, pci::Mmio bar0, const gsp::FbLayout& layout,
                                                        const Firmware& firmware);

  uint64_t libos_args_address() const { return libos_args_address_; }
  uint64_t wpr_meta_address() const { return wpr_meta_address_; }
  gsp::MessageQueue& queue() { return *queue_; }

  // GSP_SET_SYSTEM_INFO and SET_REGISTRY (nouveau's default entries), queued before the boot: GSP-RM reads them
  // first (r535_gsp_oneinit sends both before booter load).
  absl::Status QueueInitRpcs(const gsp::SystemInfoInputs& system);
  // Waits for NV_VGPU_MSG_EVENT_GSP_INIT_DONE, carrying out every RUN_CPU_SEQUENCER event on the way
  // (r535_gsp_rpc_poll with r535_gsp_msg_run_cpu_sequencer). Returns the sequencer commands carried out.
  absl::StatusOr<int> WaitForInitDone(gsp::SequencerTarget& target, absl::Duration timeout);
  // GET_GSP_STATIC_INFO (r535_gsp_rpc_get_gsp_static_info).
  absl::StatusOr<gsp::GspStaticConfigInfo> GetStaticInfo(absl::Duration timeout);
  // UNLOADING_GUEST_DRIVER for an unload, not a suspend (r535_gsp_rpc_unloading_guest_driver: bInPMTransition 0,
  // newLevel NV2080_CTRL_GPU_SET_POWER_STATE_GPU_LEVEL_0).
  absl::Status Unload(absl::Duration timeout);

 private:
  GspRm() = default;
  // A zeroed DMA buffer of `size` bytes whose bus addresses are contiguous (LibOS maps its regions as CONTIGUOUS, and
  // the falcons' DMA reads ranges); kept for the GspRm's life.
  absl::StatusOr<pci::DmaBuffer*> Allocate(pci::Device& pci, size_t size, absl::string_view what, bool contiguous);

  std::vector<std::unique_ptr<pci::DmaBuffer>> buffers_;
  std::unique_ptr<gsp::MessageQueue> queue_;
  uint64_t libos_args_address_ = 0;
  uint64_t wpr_meta_address_ = 0;
};

}  // namespace nv

#endif  // BAREGPU_NV_GSP_RM_H_
