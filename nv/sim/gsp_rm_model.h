// GSP-RM in the virtual AD102: what the 38 MiB RISC-V firmware does over its message queues, from the booter
// starting the GSP's core to the driver unloading it. GSP-RM cannot run in a model; this is its protocol, checked
// the way the firmware checks its host:
//
//   Boot(args)      LibOS reads its memory-region arguments (the page the driver put in the GSP falcon's
//                   MAILBOX0/1), finds RMARGS, reads GSP_ARGUMENTS_CACHED and starts the message queues; GSP-RM then
//                   takes the RPCs the driver queued before boot: GSP_SET_SYSTEM_INFO, then SET_REGISTRY (nouveau
//                   r535_gsp_oneinit, tinygrad NV_GSP.init_sw), and asks the CPU to run a sequencer buffer
//                   (NV_VGPU_MSG_EVENT_GSP_RUN_CPU_SEQUENCER; nouveau r535_gsp_msg_run_cpu_sequencer).
//   OnDoorbell()    the driver wrote NV_PGSP_QUEUE_HEAD(0). While the sequencer is outstanding, the doorbell is the
//                   sequencer's own last step: the model checks through the priv bus that every register step took
//                   effect and posts NV_VGPU_MSG_EVENT_GSP_INIT_DONE, or, when some landed and some did not, records
//                   what is missing and never does (no step landed: not run yet, a doorbell for an RPC).
//                   Once running it answers RPCs: GET_GSP_STATIC_INFO, GSP_RM_ALLOC / GSP_RM_CONTROL / FREE over an
//                   RM object database (nv/sim/rm_object_database.h), UNLOADING_GUEST_DRIVER; any other RPC gets
//                   NV_ERR_NOT_SUPPORTED.
//
// Deterministic and passive: no thread of its own; it runs on the thread that calls Boot or OnDoorbell (the device
// calls them from the booter model and from the BAR0 write of the doorbell). Not thread-safe: the device serialises
// the calls.
//
// Where GSP-RM's behaviour is not public the model chooses, and says so beside the choice: the sequencer's contents
// and how completion is seen, the statuses of refusals (from NV_STATUS descriptions), the GspStaticConfigInfo values
// no public source gives.
#ifndef BAREGPU_NV_SIM_GSP_RM_MODEL_H_
#define BAREGPU_NV_SIM_GSP_RM_MODEL_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "nv/gsp/layouts.h"
#include "nv/regs/ad102.h"
#include "nv/sim/bar0_block.h"
#include "nv/sim/gsp_message_queue.h"
#include "nv/sim/rm_object_database.h"

namespace nv::sim {

struct GspRmConfig {
  // The board's video memory (RTX 4090: 24 GiB; nv/sim/ad102.h Ad102Config).
  uint64_t fb_size = uint64_t{24} << 30;
  // The top of video memory GSP-RM keeps for itself (WPR2, its heap, the BAR page directories); the model reports
  // FB below it as usable. Model's choice: no public source gives the 535 figure for a 24 GiB board.
  uint64_t rm_reserved_size = uint64_t{512} << 20;
};

class GspRmModel {
 public:
  enum class State {
    kHalted,             // before Boot
    kInitializing,       // queues started; waiting for GSP_SET_SYSTEM_INFO and SET_REGISTRY
    kAwaitingSequencer,  // RUN_CPU_SEQUENCER posted; waiting for the driver to carry it out
    kRunning,            // INIT_DONE posted; answering RPCs
    kUnloaded,           // UNLOADING_GUEST_DRIVER acknowledged
    kFailed,             // stopped at an error (errors() says which); GSP-RM answers nothing more
  };

  // The sequencer the model posts (model's choice; the opcodes and layout are rmgspseq.h's and nouveau's). GSP-RM
  // uses its own NV_PGSP_MAILBOX scratch registers: the model first writes kSequencerModifyInitial to MAILBOX(1) and
  // 0 to MAILBOX(0), then asks for
  //   REG_WRITE  MAILBOX(0) = kSequencerToken
  //   REG_POLL   MAILBOX(0) & 0xffffffff == kSequencerToken          (passes once the write landed)
  //   REG_MODIFY MAILBOX(1) mask kSequencerModifyMask, val kSequencerModifyValue
  //   REG_WRITE  NV_PGSP_QUEUE_HEAD(0) = 0                           (the doorbell: "done", the model looks)
  // GSP-RM's own wait for a sequencer is not public; the model needs a moment to look, and the doorbell is the one
  // driver write the device already hands it.
  static constexpr uint32_t kSequencerToken = 0x5e0c0de1;
  static constexpr uint32_t kSequencerModifyInitial = 0xa5a5a5a5;
  static constexpr uint32_t kSequencerModifyMask = 0x0000ff00;
  static constexpr uint32_t kSequencerModifyValue = 0x00003c00;
  static constexpr uint32_t kSequencerPollTimeoutUs = 1000;  // model's choice (nouveau waits 4 s when 0)
  static constexpr uint32_t kTokenRegister = regs::ad102::NV_PGSP_MAILBOX::address(0);
  static constexpr uint32_t kModifyRegister = regs::ad102::NV_PGSP_MAILBOX::address(1);
  // The doorbell: 0 written to NV_PGSP_QUEUE_HEAD(0) (nouveau r535_gsp_cmdq_push, tinygrad NVRpcQueue).
  static constexpr uint32_t kDoorbellRegister = regs::ad102::NV_PGSP_QUEUE_HEAD::address(0);
  static constexpr uint32_t kDoorbellValue = 0;

  // The handles of the client, device and subdevice GSP-RM allocates for itself (GspStaticConfigInfo
  // hInternalClient etc.; nouveau sends its internal controls to them). Model's choice: RM's handle generator is not
  // public; these stay clear of nouveau's (0xc1d00000 | id, 0xde1d0000, 0x5d1d0000) and tinygrad's (0xc1e00004,
  // 0xcf000000 + n) own handles.
  static constexpr uint32_t kInternalClient = 0xc1dff000;
  static constexpr uint32_t kInternalDevice = 0xde700000;
  static constexpr uint32_t kInternalSubdevice = 0x5d700000;

  GspRmModel(DeviceMemory& memory, PrivBus& priv_bus, GspRmConfig config = {});

  void Boot(uint64_t libos_args_address);
  void OnDoorbell();

  // --- fault injection ---
  // The next message into the status queue carries a checksum that does not fold to zero.
  void CorruptNextChecksum() { corrupt_next_checksum_ = true; }
  // The next reply to `function` carries `nv_status` (in rpc_result, and in the RPC's own status field for
  // GSP_RM_ALLOC / GSP_RM_CONTROL / FREE) and the RPC is not carried out.
  void FailNextReply(uint32_t function, uint32_t nv_status) { fail_next_[function] = nv_status; }
  // The next OnDoorbell is lost (the model does not look at the queue).
  void LoseNextDoorbell() { lose_next_doorbell_ = true; }

  State state() const { return state_; }
  // Every protocol error the model saw: its own (in order), then its queue's.
  std::vector<absl::Status> errors() const;
  // Refusals the model answered with an NV_STATUS (what and why), in order.
  const std::vector<std::string>& refusals() const { return refusals_; }
  const RmObjectDatabase& objects() const { return objects_; }
  const GspMessageQueue& queue() const { return queue_; }
  // The GspStaticConfigInfo GET_GSP_STATIC_INFO answers with.
  const gsp::GspStaticConfigInfo& static_info() const { return static_info_; }

 private:
  void Fail(std::string what);
  bool ReadLibosArguments(uint64_t address, gsp::GSP_ARGUMENTS_CACHED* rm_args);
  void ProcessCommands();
  void Initialize(const GspCommand& command);
  bool CheckSystemInfo(std::span<const uint8_t> payload);
  bool CheckRegistry(std::span<const uint8_t> payload);
  void PostSequencer();
  void CheckSequencer();
  void Execute(const GspCommand& command);
  void AllocRpc(const GspCommand& command);
  void ControlRpc(const GspCommand& command);
  void FreeRpc(const GspCommand& command);
  // Runs control `cmd` on object `hObject` of `hClient`, checking the object, its class and the parameter size, and
  // fills `params` in place.
  RmResult Control(uint32_t hClient, uint32_t hObject, uint32_t cmd, std::span<uint8_t> params);
  void Reply(const GspCommand& command, uint32_t status, std::span<const uint8_t> payload);
  void Event(uint32_t function, std::span<const uint8_t> payload);
  void Refused(const GspCommand& command, const RmResult& result);
  // Flips the checksum of the status-queue element the next message starts at (fault injection).
  uint32_t StatusWritePtr();
  void CorruptElement(uint32_t element);
  bool SharedBusAddress(uint64_t offset, uint64_t* bus);

  DeviceMemory& memory_;
  PrivBus& priv_bus_;
  GspRmConfig config_;
  GspMessageQueue queue_;
  State state_ = State::kHalted;
  bool have_system_info_ = false;
  gsp::MESSAGE_QUEUE_INIT_ARGUMENTS queue_args_{};
  gsp::GspStaticConfigInfo static_info_{};
  RmObjectDatabase objects_;
  std::vector<absl::Status> errors_;
  std::vector<std::string> refusals_;

  bool corrupt_next_checksum_ = false;
  bool lose_next_doorbell_ = false;
  absl::flat_hash_map<uint32_t, uint32_t> fail_next_;
};

}  // namespace nv::sim

#endif  // BAREGPU_NV_SIM_GSP_RM_MODEL_H_
