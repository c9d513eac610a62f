// Tables the SMU 13.0.0 firmware exchanges with the driver through the driver table (TransferTableSmu2Dram),
// from Linux 6.12 drivers/gpu/drm/amd/pm/swsmu/inc/pmfw_if/smu13_driver_if_v13_0_0.h; members named as there and
// checked against gcc's layout of the header by tests/am/regs/layouts_test.cc.
#ifndef BAREGPU_AM_REGS_SMU_TABLES_H_
#define BAREGPU_AM_REGS_SMU_TABLES_H_

#include <cstdint>

#include "am/regs/smu_driver_if_constants.h"

namespace am::regs::smu {

// SmuMetrics_t: what TABLE_SMU_METRICS reports (smu_v13_0_0_get_smu_metrics_data reads it).
struct SmuMetrics {
  uint32_t CurrClock[PPCLK_COUNT];
  uint16_t AverageGfxclkFrequencyTarget;
  uint16_t AverageGfxclkFrequencyPreDs;
  uint16_t AverageGfxclkFrequencyPostDs;
  uint16_t AverageFclkFrequencyPreDs;
  uint16_t AverageFclkFrequencyPostDs;
  uint16_t AverageMemclkFrequencyPreDs;
  uint16_t AverageMemclkFrequencyPostDs;
  uint16_t AverageVclk0Frequency;
  uint16_t AverageDclk0Frequency;
  uint16_t AverageVclk1Frequency;
  uint16_t AverageDclk1Frequency;
  uint16_t PCIeBusy;
  uint16_t dGPU_W_MAX;
  uint16_t padding;
  uint32_t MetricsCounter;
  uint16_t AvgVoltage[SVI_PLANE_COUNT];
  uint16_t AvgCurrent[SVI_PLANE_COUNT];
  uint16_t AverageGfxActivity;
  uint16_t AverageUclkActivity;
  uint16_t Vcn0ActivityPercentage;
  uint16_t Vcn1ActivityPercentage;
  uint32_t EnergyAccumulator;
  uint16_t AverageSocketPower;
  uint16_t AverageTotalBoardPower;
  uint16_t AvgTemperature[TEMP_COUNT];
  uint16_t AvgTemperatureFanIntake;
  uint8_t PcieRate;
  uint8_t PcieWidth;
  uint8_t AvgFanPwm;
  uint8_t Padding[1];
  uint16_t AvgFanRpm;
  uint8_t ThrottlingPercentage[THROTTLER_COUNT];
  uint8_t VmaxThrottlingPercentage;
  uint8_t Padding1[3];
  uint32_t D3HotEntryCountPerMode[D3HOT_SEQUENCE_COUNT];
  uint32_t D3HotExitCountPerMode[D3HOT_SEQUENCE_COUNT];
  uint32_t ArmMsgReceivedCountPerMode[D3HOT_SEQUENCE_COUNT];
  uint16_t ApuSTAPMSmartShiftLimit;
  uint16_t ApuSTAPMLimit;
  uint16_t AvgApuSocketPower;
  uint16_t AverageUclkActivity_MAX;
  uint32_t PublicSerialNumberLower;
  uint32_t PublicSerialNumberUpper;
};

// SmuMetricsExternal_t: the metrics table as it sits in the driver table, padded for the firmware.
struct SmuMetricsExternal {
  struct SmuMetrics SmuMetrics;  // "struct": the member has the type's name, as in the header
  uint32_t Spare[29];
  uint32_t MmHubPadding[8];
};

}  // namespace am::regs::smu

#endif  // BAREGPU_AM_REGS_SMU_TABLES_H_
