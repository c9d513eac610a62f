#include "nv/gsp_rm.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "nv/gsp/radix3.h"
#include "nv/regs/rpc_constants.h"

namespace nv {
namespace {

namespace rpc = regs::rpc;

// ctrl2080gpu.h NV2080_CTRL_GPU_SET_POWER_STATE_GPU_LEVEL_0: what an unload (not a suspend) asks for
// (r535_gsp_rpc_unloading_guest_driver).
constexpr uint32_t kGpuPowerStateLevel0 = 0;

uint64_t RoundUpToPages(uint64_t bytes) {
  return (bytes + gsp::kGspPageSize - 1) / gsp::kGspPageSize * gsp::kGspPageSize;
}

template <typename T>
void Store(pci::DmaBuffer& buffer, uint64_t offset, const T& value) {
  std::memcpy(buffer.cpu() + offset, &value, sizeof(value));
}

}  // namespace

absl::StatusOr<pci::DmaBuffer*> GspRm::Allocate(pci::Device& pci, size_t size, absl::string_view what,
                                                bool contiguous) {
  BAREGPU_ASSIGN_OR_RETURN(std::unique_ptr<pci::DmaBuffer> buffer, pci.AllocDma(RoundUpToPages(size)));
  if (contiguous && !buffer->contiguous()) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "GSP-RM's %s: %d bytes of DMA memory are not contiguous in bus address space (GSP-RM and the falcons read "
        "it as one range)",
        what, size));
  }
  std::memset(buffer->cpu(), 0, buffer->size());
  buffers_.push_back(std::move(buffer));
  return buffers_.back().get();
}

absl::StatusOr<std::unique_ptr<GspRm>> GspRm::Prepare(pci::Device& pci, pci::Mmio bar0, const gsp::FbLayout& layout,
                                                      const Firmware& firmware) {
  std::unique_ptr<GspRm> rm(new GspRm());

  // LibOS: three log buffers, the RM arguments page, and the region array (r535_gsp_libos_init).
  gsp::LibosRegions regions;
  std::vector<pci::DmaBuffer*> logs;
  for (const char* name : {"LOGINIT", "LOGINTR", "LOGRM"}) {
    BAREGPU_ASSIGN_OR_RETURN(pci::DmaBuffer * log, rm->Allocate(pci, gsp::kLibosLogBufferSize, name, true));
    logs.push_back(log);
  }
  regions.loginit = {logs[0]->device_address(), gsp::kLibosLogBufferSize};
  regions.logintr = {logs[1]->device_address(), gsp::kLibosLogBufferSize};
  regions.logrm = {logs[2]->device_address(), gsp::kLibosLogBufferSize};
  for (size_t i = 0; i < logs.size(); ++i) {
    const gsp::DmaRegion region = i == 0 ? regions.loginit : i == 1 ? regions.logintr : regions.logrm;
    BAREGPU_ASSIGN_OR_RETURN(const std::vector<uint64_t> ptes, gsp::LogBufferPtes(region));
    std::memcpy(logs[i]->cpu() + gsp::kLogBufferPteOffset, ptes.data(), ptes.size() * sizeof(uint64_t));
  }
  BAREGPU_ASSIGN_OR_RETURN(pci::DmaBuffer * rmargs, rm->Allocate(pci, gsp::kRmArgsSize, "RMARGS", true));
  regions.rmargs = {rmargs->device_address(), gsp::kRmArgsSize};
  BAREGPU_ASSIGN_OR_RETURN(pci::DmaBuffer * libos, rm->Allocate(pci, gsp::kLibosArgsSize, "LibOS arguments", true));
  BAREGPU_ASSIGN_OR_RETURN(const std::vector<gsp::LibosMemoryRegionInitArgument> libos_args,
                           gsp::BuildLibosArgs(regions));
  std::memcpy(libos->cpu(), libos_args.data(), libos_args.size() * sizeof(libos_args[0]));
  rm->libos_args_address_ = libos->device_address();

  // The message queues (r535_gsp_shared_init) and the RM arguments that point GSP-RM at them (r535_gsp_rmargs_init).
  BAREGPU_ASSIGN_OR_RETURN(const gsp::SharedRegionLayout queue_layout, gsp::LayoutSharedRegion());
  BAREGPU_ASSIGN_OR_RETURN(pci::DmaBuffer * shared, rm->Allocate(pci, queue_layout.size, "message queues", false));
  BAREGPU_ASSIGN_OR_RETURN(
      rm->queue_, gsp::MessageQueue::Create(std::span<uint8_t>(shared->cpu(), queue_layout.size),
                                            shared->page_addresses().subspan(0, queue_layout.size / gsp::kGspPageSize),
                                            [bar0] { bar0.Write32(gsp::kDoorbellRegister, gsp::kDoorbellValue); }));
  const gsp::MESSAGE_QUEUE_INIT_ARGUMENTS& queues = rm->queue_->init_arguments();
  BAREGPU_ASSIGN_OR_RETURN(const gsp::GSP_ARGUMENTS_CACHED rm_args,
                           gsp::BuildRmArgs({.shared_mem_pa = queues.sharedMemPhysAddr,
                                             .page_table_entry_count = queues.pageTableEntryCount,
                                             .cmd_queue_offset = queues.cmdQueueOffset,
                                             .stat_queue_offset = queues.statQueueOffset},
                                            /*resume=*/false));
  Store(*rmargs, 0, rm_args);

  // The GSP-RM image in pages and its radix3 table (nvkm_gsp_radix3_sg).
  const firmware::nv::ElfSection* fwimage = firmware.image->Find(".fwimage");
  const firmware::nv::ElfSection* signature = firmware.image->Find(firmware.signature_section);
  if (fwimage == nullptr || signature == nullptr) {
    return absl::DataLossError(absl::StrFormat("the GSP-RM image has no %s section",
                                               fwimage == nullptr ? ".fwimage" : firmware.signature_section));
  }
  BAREGPU_ASSIGN_OR_RETURN(const gsp::Radix3Geometry geometry, gsp::Radix3GeometryFor(fwimage->size));
  BAREGPU_ASSIGN_OR_RETURN(pci::DmaBuffer * image, rm->Allocate(pci, fwimage->size, "image (.fwimage)", false));
  std::memcpy(image->cpu(), firmware.image_file.data() + fwimage->offset, fwimage->size);
  const uint64_t table_pages = geometry.level0_pages + geometry.level1_pages + geometry.level2_pages;
  BAREGPU_ASSIGN_OR_RETURN(pci::DmaBuffer * table,
                           rm->Allocate(pci, table_pages * gsp::kRadix3PageSize, "radix3 table", false));
  // Pages of `table`: level 0, level 1, then level 2.
  const std::span<const uint64_t> table_addresses = table->page_addresses();
  BAREGPU_ASSIGN_OR_RETURN(const gsp::Radix3Table radix3,
                           gsp::BuildRadix3(fwimage->size, image->page_addresses().subspan(0, geometry.image_pages),
                                            table_addresses.subspan(2, geometry.level2_pages), table_addresses[1]));
  std::memcpy(table->cpu(), radix3.level0.data(), radix3.level0.size() * sizeof(uint64_t));
  std::memcpy(table->cpu() + gsp::kRadix3PageSize, radix3.level1.data(), radix3.level1.size() * sizeof(uint64_t));
  std::memcpy(table->cpu() + 2 * gsp::kRadix3PageSize, radix3.level2.data(), radix3.level2.size() * sizeof(uint64_t));

  // The bootloader's payload and the chip's signature (r535_gsp_rm_boot_ctor, r535_gsp_oneinit).
  const firmware::nv::BinHeader& bl = firmware.bootloader->bin.header;
  BAREGPU_ASSIGN_OR_RETURN(pci::DmaBuffer * bootloader, rm->Allocate(pci, bl.data_size, "bootloader", true));
  std::memcpy(bootloader->cpu(), firmware.bootloader_file.data() + bl.data_offset, bl.data_size);
  BAREGPU_ASSIGN_OR_RETURN(pci::DmaBuffer * sig, rm->Allocate(pci, signature->size, "signature", true));
  std::memcpy(sig->cpu(), firmware.image_file.data() + signature->offset, signature->size);

  // The WPR metadata the booter reads (r535_gsp_wpr_meta_init).
  gsp::WprMetaSources sources{.radix3_level0_pa = table_addresses[0],
                              .bootloader_pa = bootloader->device_address(),
                              .signature_pa = sig->device_address()};
  gsp::SetBootloaderOffsets(*firmware.bootloader, sources);
  BAREGPU_RETURN_IF_ERROR(gsp::SetSignatureSection(*firmware.image, firmware.signature_section, sources));
  BAREGPU_ASSIGN_OR_RETURN(const gsp::GspFwWprMeta meta, gsp::BuildWprMeta(layout, sources));
  BAREGPU_ASSIGN_OR_RETURN(pci::DmaBuffer * meta_page, rm->Allocate(pci, sizeof(meta), "WPR metadata", true));
  Store(*meta_page, 0, meta);
  rm->wpr_meta_address_ = meta_page->device_address();
  return rm;
}

absl::Status GspRm::QueueInitRpcs(const gsp::SystemInfoInputs& system) {
  // Nothing reads these before GSP-RM boots: they wait in the command queue (the doorbell lands in a register).
  constexpr absl::Duration kRoom = absl::Milliseconds(1);
  BAREGPU_ASSIGN_OR_RETURN(const gsp::GspSystemInfo info, gsp::BuildSystemInfo(system));
  BAREGPU_RETURN_IF_ERROR(queue_->SendRpc(rpc::NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO,
                                          {reinterpret_cast<const uint8_t*>(&info), sizeof(info)}, kRoom));
  BAREGPU_ASSIGN_OR_RETURN(const std::string registry, gsp::BuildRegistryTable(gsp::DefaultRegistryEntries()));
  return queue_->SendRpc(rpc::NV_VGPU_MSG_FUNCTION_SET_REGISTRY,
                         {reinterpret_cast<const uint8_t*>(registry.data()), registry.size()}, kRoom);
}

absl::StatusOr<int> GspRm::WaitForInitDone(gsp::SequencerTarget& target, absl::Duration timeout) {
  int commands = 0;
  absl::Status sequencer;
  queue_->set_event_handler([&](const gsp::GspMessage& message) {
    if (message.function != rpc::NV_VGPU_MSG_EVENT_GSP_RUN_CPU_SEQUENCER || !sequencer.ok()) return;
    absl::StatusOr<gsp::SequencerRun> run = gsp::RunCpuSequencer(message.payload, target);
    if (run.ok()) {
      commands += run->commands;
    } else {
      sequencer = run.status();
    }
  });
  absl::StatusOr<gsp::GspMessage> done = queue_->WaitFor(rpc::NV_VGPU_MSG_EVENT_GSP_INIT_DONE, timeout);
  queue_->set_event_handler(nullptr);
  if (!sequencer.ok()) {
    return absl::Status(sequencer.code(),
                        absl::StrCat("GSP-RM's CPU sequencer: ", sequencer.message(),
                                     done.ok() ? "" : absl::StrCat("; then ", done.status().message())));
  }
  if (!done.ok()) return done.status();
  return commands;
}

absl::StatusOr<gsp::GspStaticConfigInfo> GspRm::GetStaticInfo(absl::Duration timeout) {
  gsp::GspStaticConfigInfo info{};
  BAREGPU_RETURN_IF_ERROR(queue_->SendRpc(rpc::NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO,
                                          {reinterpret_cast<const uint8_t*>(&info), sizeof(info)}, timeout));
  BAREGPU_ASSIGN_OR_RETURN(const gsp::GspMessage reply,
                           queue_->WaitFor(rpc::NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO, timeout, sizeof(info)));
  if (reply.payload.size() < sizeof(info)) {
    return absl::DataLossError(absl::StrFormat("GET_GSP_STATIC_INFO replied with %d bytes, GspStaticConfigInfo is %d",
                                               reply.payload.size(), sizeof(info)));
  }
  std::memcpy(&info, reply.payload.data(), sizeof(info));
  return info;
}

absl::Status GspRm::Unload(absl::Duration timeout) {
  const gsp::rpc_unloading_guest_driver_v1F_07 unload{
      .bInPMTransition = 0, .bGc6Entering = 0, .newLevel = kGpuPowerStateLevel0};
  BAREGPU_RETURN_IF_ERROR(queue_->SendRpc(rpc::NV_VGPU_MSG_FUNCTION_UNLOADING_GUEST_DRIVER,
                                          {reinterpret_cast<const uint8_t*>(&unload), sizeof(unload)}, timeout));
  return queue_->WaitFor(rpc::NV_VGPU_MSG_FUNCTION_UNLOADING_GUEST_DRIVER, timeout).status();
}

}  // namespace nv
