// FLCN_STATUS: the status codes NVIDIA's falcon ucode reports (open-gpu-kernel-modules 535.113.01,
// src/nvidia/arch/nvalloc/common/inc/flcnretval.h; the values are NVIDIA's, hand-copied, one line per code used).
// The virtual AD102's heavy-secure ucode models leave one of them in the falcon's MAILBOX0 when they halt: FLCN_OK
// when done (what nouveau's nvkm_falcon_fw_boot expects: mbox0_ok 0), an error otherwise. Which code the real BROM
// or booter reports for which refusal is in no source available here, so each use says whether its mapping is
// NVIDIA's (the code's name says it) or chosen.
#ifndef BAREGPU_NV_SIM_FLCN_STATUS_H_
#define BAREGPU_NV_SIM_FLCN_STATUS_H_

#include <cstdint>

namespace nv::sim::flcn {

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

}  // namespace nv::sim::flcn

#endif  // BAREGPU_NV_SIM_FLCN_STATUS_H_
