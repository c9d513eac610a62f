// FLCN_STATUS: the status codes NVIDIA's falcon ucode reports in a falcon's MAILBOX0 (open-gpu-kernel-modules
// 535.113.01, src/nvidia/arch/nvalloc/common/inc/flcnretval.h; the values are NVIDIA's, hand-copied, one line per code
// used here). The driver names what a booter or FWSEC left (nv/device.cc); the virtual AD102's heavy-secure ucode
// models leave them (nv/sim: which code the real BROM or booter reports for which refusal is in no source available
// here, so each use there says whether its mapping is NVIDIA's or chosen).
#ifndef BAREGPU_NV_REGS_FLCN_STATUS_H_
#define BAREGPU_NV_REGS_FLCN_STATUS_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"

namespace nv::regs::flcn {

inline constexpr uint32_t kOk = 0x00;                                // FLCN_OK
inline constexpr uint32_t kErrNotSupported = 0x01;                   // FLCN_ERR_NOT_SUPPORTED
inline constexpr uint32_t kErrInvalidArgument = 0x02;                // FLCN_ERR_INVALID_ARGUMENT
inline constexpr uint32_t kErrDmaNack = 0x17;                        // FLCN_ERR_DMA_NACK
inline constexpr uint32_t kErrOutOfRange = 0x2f;                     // FLCN_ERR_OUT_OF_RANGE
inline constexpr uint32_t kErrInvalidState = 0x35;                   // FLCN_ERR_INVALID_STATE
inline constexpr uint32_t kErrHsChkInvalidInput = 0xa0;              // FLCN_ERR_HS_CHK_INVALID_INPUT
inline constexpr uint32_t kErrHsChkUcodeRevoked = 0xa2;              // FLCN_ERR_HS_CHK_UCODE_REVOKED
inline constexpr uint32_t kErrHsChkEngidMismatch = 0xb7;             // FLCN_ERR_HS_CHK_ENGID_MISMATCH
inline constexpr uint32_t kErrBromSignFail = 0xf7;                   // FLCN_ERR_APM_BROM_SIGN_FAIL
inline constexpr uint32_t kErrAuthGspRmHandoffFailed = 0xf8;         // FLCN_ERR_AUTH_GSP_RM_HANDOFF_FAILED
inline constexpr uint32_t kErrInvalidWprMetaMagicOrRevision = 0xf9;  // FLCN_ERR_INVALID_WPRMETA_MAGIC_OR_REVISION

// RM's test for a BAR0 read that failed on the priv ring (the unit is absent or off): the value masked with
// FLCN_BAR0_PRIV_PRI_ERROR_MASK is FLCN_BAR0_PRIV_PRI_ERROR_CODE (flcnretval.h). The virtual AD102 reads such a value
// for unclaimed registers; the driver treats one as "not there".
inline constexpr uint32_t kBar0PrivPriErrorMask = 0xfff00000;  // FLCN_BAR0_PRIV_PRI_ERROR_MASK
inline constexpr uint32_t kBar0PrivPriErrorCode = 0xbad00000;  // FLCN_BAR0_PRIV_PRI_ERROR_CODE
constexpr bool IsPriError(uint32_t value) { return (value & kBar0PrivPriErrorMask) == kBar0PrivPriErrorCode; }

// "FLCN_ERR_APM_BROM_SIGN_FAIL (0xf7)"; a code not listed above as "FLCN_STATUS 0x..".
inline std::string FlcnStatusName(uint32_t status) {
  struct Named {
    uint32_t value;
    const char* name;
  };
  static constexpr Named kNames[] = {
      {kOk, "FLCN_OK"},
      {kErrNotSupported, "FLCN_ERR_NOT_SUPPORTED"},
      {kErrInvalidArgument, "FLCN_ERR_INVALID_ARGUMENT"},
      {kErrDmaNack, "FLCN_ERR_DMA_NACK"},
      {kErrOutOfRange, "FLCN_ERR_OUT_OF_RANGE"},
      {kErrInvalidState, "FLCN_ERR_INVALID_STATE"},
      {kErrHsChkInvalidInput, "FLCN_ERR_HS_CHK_INVALID_INPUT"},
      {kErrHsChkUcodeRevoked, "FLCN_ERR_HS_CHK_UCODE_REVOKED"},
      {kErrHsChkEngidMismatch, "FLCN_ERR_HS_CHK_ENGID_MISMATCH"},
      {kErrBromSignFail, "FLCN_ERR_APM_BROM_SIGN_FAIL"},
      {kErrAuthGspRmHandoffFailed, "FLCN_ERR_AUTH_GSP_RM_HANDOFF_FAILED"},
      {kErrInvalidWprMetaMagicOrRevision, "FLCN_ERR_INVALID_WPRMETA_MAGIC_OR_REVISION"},
  };
  for (const Named& n : kNames) {
    if (n.value == status) return absl::StrFormat("%s (%#x)", n.name, status);
  }
  return absl::StrFormat("FLCN_STATUS %#x (flcnretval.h)", status);
}

}  // namespace nv::regs::flcn

#endif  // BAREGPU_NV_REGS_FLCN_STATUS_H_
