// The PSP's GFX interface: the ring frame the driver writes to the KM ring, the 1 KiB command/response buffer a
// frame points at, and the commands the driver sends. Layouts from Linux 6.12
// drivers/gpu/drm/amd/amdgpu/psp_gfx_if.h; checked against the kernel's by tests/am/regs/layouts_test.cc.
// Command ids (GFX_CMD_ID_*), firmware types (GFX_FW_TYPE_*), status codes (TEE_ERROR_*, PSP_ERR_*) and the
// mailbox control ids (GFX_CTRL_CMD_ID_*): am/regs/psp_constants.h.
#ifndef BAREGPU_AM_REGS_PSP_H_
#define BAREGPU_AM_REGS_PSP_H_

#include <cstdint>

#include "am/regs/psp_constants.h"

namespace am::regs::psp {

// psp_gfx_if.h: psp_gfx_ctrl — the TEE GFX control registers as the header lays them out.
struct PspGfxCtrl {
  uint32_t cmd_resp;
  uint32_t rbi_wptr;
  uint32_t rbi_rptr;
  uint32_t gpcom_wptr;
  uint32_t gpcom_rptr;
  uint32_t ring_addr_lo;
  uint32_t ring_addr_hi;
  uint32_t ring_buf_size;
};

// psp_gfx_if.h: psp_gfx_buf_desc
struct PspGfxBufDesc {
  uint32_t buf_phy_addr_lo;
  uint32_t buf_phy_addr_hi;
  uint32_t buf_size;
};

// psp_gfx_if.h: psp_gfx_cmd_setup_tmr (GFX_CMD_ID_SETUP_TMR, and SETUP_VMR under SR-IOV).
struct PspGfxCmdSetupTmr {
  uint32_t buf_phy_addr_lo;
  uint32_t buf_phy_addr_hi;
  uint32_t buf_size;
  uint32_t tmr_flags;  // bit 0 sriov_enabled, bit 1 virt_phy_addr
  uint32_t system_phy_addr_lo;
  uint32_t system_phy_addr_hi;

  // The bitfield's members as tmr_flags bits (the header declares them as a C bitfield, lowest bit first).
  static constexpr uint32_t kSriovEnabled = 1u << 0;
  // "driver passes both virtual and physical address to PSP": buf_phy_addr is then the MC address and
  // system_phy_addr the physical one (psp_prep_tmr_cmd_buf always sets it).
  static constexpr uint32_t kVirtPhyAddr = 1u << 1;
};

// psp_gfx_if.h: psp_gfx_cmd_load_ip_fw (GFX_CMD_ID_LOAD_IP_FW).
struct PspGfxCmdLoadIpFw {
  uint32_t fw_phy_addr_lo;
  uint32_t fw_phy_addr_hi;
  uint32_t fw_size;
  uint32_t fw_type;  // a GFX_FW_TYPE_*
};

// psp_gfx_if.h: psp_gfx_cmd_reg_prog (GFX_CMD_ID_PROG_REG).
struct PspGfxCmdRegProg {
  uint32_t reg_value;
  uint32_t reg_id;
};

// psp_gfx_if.h: psp_gfx_cmd_load_toc (GFX_CMD_ID_LOAD_TOC); the response's tmr_size answers it.
struct PspGfxCmdLoadToc {
  uint32_t toc_phy_addr_lo;
  uint32_t toc_phy_addr_hi;
  uint32_t toc_size;
};

// psp_gfx_if.h: psp_gfx_cmd_boot_cfg (GFX_CMD_ID_BOOT_CFG).
struct PspGfxCmdBootCfg {
  uint32_t timestamp;
  uint32_t sub_cmd;
  uint32_t boot_config;
  uint32_t boot_config_valid;
};

// psp_gfx_if.h: union psp_gfx_commands. The trusted-application commands (load_ta, unload_ta, invoke_cmd),
// save/restore and spatial partitioning are not used by baregpu; `raw` keeps the union at the kernel's size,
// which the largest of them (invoke_cmd with its 64-entry buffer list) sets.
union PspGfxCommands {
  PspGfxCmdSetupTmr cmd_setup_tmr;
  PspGfxCmdLoadIpFw cmd_load_ip_fw;
  PspGfxCmdRegProg cmd_setup_reg_prog;
  PspGfxCmdSetupTmr cmd_setup_vmr;
  PspGfxCmdLoadToc cmd_load_toc;
  PspGfxCmdBootCfg boot_cfg;
  uint8_t raw[8 + 8 + 64 * sizeof(PspGfxBufDesc)];  // session_id, ta_cmd_id, num_desc, total_size, buf_desc[64]
};

// psp_gfx_if.h: psp_gfx_resp — the response part of the command buffer (GPCOM ring).
struct PspGfxResp {
  uint32_t status;  // 0 on success, else a TEE_ERROR_* or PSP_ERR_* code
  uint32_t session_id;
  uint32_t fw_addr_lo;
  uint32_t fw_addr_hi;
  uint32_t tmr_size;  // answer to LOAD_TOC
  uint32_t reserved[11];
  uint32_t uresp[8];  // union psp_gfx_uresp: command-specific responses (boot_cfg, fwar_db_info)
};

// psp_gfx_if.h: psp_gfx_cmd_resp — the 1 KiB buffer a ring frame points at: command at +0, response at +864.
struct PspGfxCmdResp {
  uint32_t buf_size;
  uint32_t buf_version;  // PSP_GFX_CMD_BUF_VERSION
  uint32_t cmd_id;       // a GFX_CMD_ID_*
  uint32_t resp_buf_addr_lo;
  uint32_t resp_buf_addr_hi;
  uint32_t resp_offset;
  uint32_t resp_buf_size;
  PspGfxCommands cmd;
  uint8_t reserved_1[864 - sizeof(PspGfxCommands) - 28];
  PspGfxResp resp;
  uint8_t reserved_2[1024 - 864 - sizeof(PspGfxResp)];
};

// psp_gfx_if.h: psp_gfx_rb_frame — one 64-byte entry of the KM ring.
struct PspGfxRbFrame {
  uint32_t cmd_buf_addr_lo;
  uint32_t cmd_buf_addr_hi;
  uint32_t cmd_buf_size;
  uint32_t fence_addr_lo;
  uint32_t fence_addr_hi;
  uint32_t fence_value;
  uint32_t sid_lo;
  uint32_t sid_hi;
  uint8_t vmid;
  uint8_t frame_type;
  uint8_t reserved1[2];
  uint32_t reserved2[7];
};

}  // namespace am::regs::psp

#endif  // BAREGPU_AM_REGS_PSP_H_
