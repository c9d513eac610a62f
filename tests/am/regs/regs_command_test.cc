// `baregpu regs` run as a user would, through the built binary.
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/am/sim/sim_state_dir.h"
#include "tests/tools/run_cli.h"

namespace cli {
namespace {

using ::cli::testing::RunBaregpu;

auto* const kStateDir = am::sim::testing::RegisterSimStateDir();
using ::testing::HasSubstr;

TEST(RegsCommandTest, FindListsIpSegmentAndOffset) {
  auto r = RunBaregpu({"regs", "find", "CP_HQD_PQ_CONTROL"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  // regCP_HQD_PQ_CONTROL is 0x1fba, BASE_IDX 0, in gc_11_0_0_offset.h; it has 17 fields.
  EXPECT_THAT(r.out, HasSubstr("IP"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("gc +0 +0x1fba +CP_HQD_PQ_CONTROL +17"));
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(RegsCommandTest, FindJsonParses) {
  auto r = RunBaregpu({"regs", "find", "mmvm_l2_protection_fault", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  ASSERT_TRUE(json["registers"].is_array());
  bool saw_status = false;
  for (const auto& reg : json["registers"]) {
    EXPECT_EQ(reg["ip"], "mmhub");
    if (reg["name"] == "MMVM_L2_PROTECTION_FAULT_STATUS") {
      saw_status = true;
      EXPECT_EQ(reg["offset"], "0x70c");
      EXPECT_EQ(reg["segment"], 0);
      EXPECT_EQ(reg["fields"][0]["name"], "MORE_FAULTS");
    }
  }
  EXPECT_TRUE(saw_status);
}

TEST(RegsCommandTest, FindWithIpFilter) {
  auto r = RunBaregpu({"regs", "find", "L2_PROTECTION_FAULT_STATUS", "--ip=gc"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("GCVM_L2_PROTECTION_FAULT_STATUS"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("MMVM_")));
  auto bad = RunBaregpu({"regs", "find", "X", "--ip=dcn"});
  EXPECT_EQ(bad.exit_status, 2);
  EXPECT_THAT(bad.err, HasSubstr("unknown IP block 'dcn'"));
}

TEST(RegsCommandTest, FindWithoutMatchesFails) {
  auto r = RunBaregpu({"regs", "find", "NO_SUCH_THING_AT_ALL"});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_EQ(r.err, "error: no register name contains 'NO_SUCH_THING_AT_ALL'\n");
  EXPECT_TRUE(r.out.empty());
}

TEST(RegsCommandTest, DecodePrintsEveryField) {
  // QUEUE_SIZE=9 [5:0], RPTR_BLOCK_SIZE=5 [13:8], UNORD_DISPATCH=1 [28].
  auto r = RunBaregpu({"regs", "decode", "gc", "CP_HQD_PQ_CONTROL", "0x10000509"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("gc CP_HQD_PQ_CONTROL = 0x10000509"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("QUEUE_SIZE +\\[5:0\\] += 0x9 \\(9\\)"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("RPTR_BLOCK_SIZE +\\[13:8\\] += 0x5 \\(5\\)"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("UNORD_DISPATCH +\\[28\\] += 0x1 \\(1\\)"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("KMD_QUEUE +\\[31\\] += 0x0 \\(0\\)"));
  // The IP is optional when the name is unique; decimal values work too.
  auto plain = RunBaregpu({"regs", "decode", "CP_HQD_PQ_CONTROL", "268436745"});
  ASSERT_EQ(plain.exit_status, 0) << plain.err;
  EXPECT_EQ(plain.out, r.out);
}

TEST(RegsCommandTest, DecodeJson) {
  auto r = RunBaregpu({"regs", "decode", "GRBM_GFX_CNTL", "0x2ba7", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << r.out;
  EXPECT_EQ(json["name"], "GRBM_GFX_CNTL");
  EXPECT_EQ(json["segment"], 1);
  EXPECT_EQ(json["value"], "0x00002ba7");
  // 0x2ba7: PIPEID [1:0]=3, MEID [3:2]=1, VMID [7:4]=0xa, QUEUEID [10:8]=3, CTXID [13:11]=5.
  ASSERT_EQ(json["fields"].size(), 5u);
  EXPECT_EQ(json["fields"][0]["value"], 3);
  EXPECT_EQ(json["fields"][1]["value"], 1);
  EXPECT_EQ(json["fields"][2]["value"], 0xa);
  EXPECT_EQ(json["fields"][3]["value"], 3);
  EXPECT_EQ(json["fields"][4]["value"], 5);
  EXPECT_EQ(json["bits_outside_fields"], "0x00000000");
}

TEST(RegsCommandTest, DecodeReportsBitsOutsideFields) {
  // GRBM_GFX_CNTL's fields end at bit 13.
  auto r = RunBaregpu({"regs", "decode", "GRBM_GFX_CNTL", "0x80000000"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("bits outside every field: 0x80000000"));
}

TEST(RegsCommandTest, DecodeErrors) {
  auto unknown = RunBaregpu({"regs", "decode", "CP_HQD_PQ_CONTROLX", "1"});
  EXPECT_EQ(unknown.exit_status, 1);
  EXPECT_THAT(unknown.err, HasSubstr("no register named 'CP_HQD_PQ_CONTROLX'"));
  auto wrong_ip = RunBaregpu({"regs", "decode", "mmhub", "CP_HQD_PQ_CONTROL", "1"});
  EXPECT_EQ(wrong_ip.exit_status, 1);
  EXPECT_THAT(wrong_ip.err, HasSubstr("in mmhub"));
  auto bad_value = RunBaregpu({"regs", "decode", "CP_HQD_PQ_CONTROL", "0x100000000"});
  EXPECT_EQ(bad_value.exit_status, 2);
  EXPECT_THAT(bad_value.err, HasSubstr("not a 32-bit register value"));
  auto junk = RunBaregpu({"regs", "decode", "CP_HQD_PQ_CONTROL", "12abc"});
  EXPECT_EQ(junk.exit_status, 2);
  auto missing = RunBaregpu({"regs", "decode", "CP_HQD_PQ_CONTROL"});
  EXPECT_EQ(missing.exit_status, 2);
  EXPECT_THAT(missing.err, HasSubstr("usage: baregpu regs decode"));
  for (const auto* res : {&unknown, &wrong_ip, &bad_value, &junk, &missing}) {
    EXPECT_TRUE(absl::StartsWith(res->err, "error: ")) << res->err;
    EXPECT_EQ(std::count(res->err.begin(), res->err.end(), '\n'), 1) << res->err;
  }
}

// GCVM_CONTEXT0_CNTL is GC segment 0 offset 0x1688 (gc_11_0_0_offset.h); Navi31's GC segment 0 base is 0x1260.
TEST(RegsCommandTest, FindByAddressNamesRegisterIpAndInstance) {
  auto r = RunBaregpu({"regs", "find", "0x28e8"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("GCVM_CONTEXT0_CNTL  gc instance 0, segment 0, offset 0x1688"));
  auto bytes = RunBaregpu({"regs", "find", "0xa3a0", "--byte", "--json"});
  ASSERT_EQ(bytes.exit_status, 0) << bytes.err;
  auto j = nlohmann::json::parse(bytes.out);
  EXPECT_EQ(j["schema"], "baregpu.regs.find-address/1");
  EXPECT_EQ(j["address"], "0x28e8");
  EXPECT_EQ(j["registers"][0]["name"], "GCVM_CONTEXT0_CNTL");
  EXPECT_EQ(j["registers"][0]["instance"], 0);
  // The remapped HDP flush page (byte 0x7f000) is the driver's, named as the boot trace names it.
  auto remap = RunBaregpu({"regs", "find", "0x1fc00"});
  ASSERT_EQ(remap.exit_status, 0) << remap.err;
  EXPECT_THAT(remap.out, HasSubstr("REMAP_HDP_MEM_FLUSH_CNTL"));
  // With a device: its own discovery table's bases.
  auto device = RunBaregpu({"regs", "find", "0x28e8", "--device=sim:navi31:regs-find"});
  ASSERT_EQ(device.exit_status, 0) << device.err;
  EXPECT_THAT(device.out, HasSubstr("GCVM_CONTEXT0_CNTL"));
}

TEST(RegsCommandTest, FindByAddressErrors) {
  auto unnamed = RunBaregpu({"regs", "find", "0x3219"});
  EXPECT_EQ(unnamed.exit_status, 1);
  EXPECT_THAT(unnamed.err, HasSubstr("gc instance 0 segment 0 (offset 0x1fb9)"));
  EXPECT_EQ(RunBaregpu({"regs", "find", "0x28e9", "--byte"}).exit_status, 2);  // not dword aligned
  EXPECT_EQ(RunBaregpu({"regs", "find", "0xzz"}).exit_status, 2);
}

TEST(RegsCommandTest, ReadAndDecodeShareTheFieldsShape) {
  ASSERT_EQ(RunBaregpu({"regs", "sim:navi31:regs-shape", "write", "IH_RB_CNTL=0x11"}).exit_status, 0);
  auto read = RunBaregpu({"regs", "sim:navi31:regs-shape", "read", "IH_RB_CNTL", "--json"});
  ASSERT_EQ(read.exit_status, 0) << read.err;
  auto decode = RunBaregpu({"regs", "decode", "IH_RB_CNTL", "0x11", "--json"});
  ASSERT_EQ(decode.exit_status, 0) << decode.err;
  auto r = nlohmann::json::parse(read.out);
  auto d = nlohmann::json::parse(decode.out);
  EXPECT_EQ(r["schema"], "baregpu.regs.read/1");
  EXPECT_EQ(d["schema"], "baregpu.regs.decode/1");
  ASSERT_TRUE(r["fields"].is_array());
  EXPECT_EQ(r["fields"], d["fields"]);
}

TEST(RegsCommandTest, DeviceReadWriteAndFieldWrite) {
  auto write = RunBaregpu({"regs", "sim:navi31:regs", "write", "SCRATCH_REG3=0x1234"});
  ASSERT_EQ(write.exit_status, 0) << write.err;
  auto read = RunBaregpu({"regs", "sim:navi31:regs", "read", "SCRATCH_REG3", "--json"});
  ASSERT_EQ(read.exit_status, 0) << read.err;
  auto j = nlohmann::json::parse(read.out);
  EXPECT_EQ(j["value"], "0x00001234");
  EXPECT_EQ(j["ip"], "gc");

  auto field = RunBaregpu({"regs", "sim:navi31:regs", "write", "IH_RB_CNTL.RB_SIZE=5"});
  ASSERT_EQ(field.exit_status, 0) << field.err;
  EXPECT_THAT(field.out, HasSubstr("RB_SIZE = 0x5"));
  auto other = RunBaregpu({"regs", "sim:navi31:regs", "write", "ih_rb_cntl.mc_space=4"});
  ASSERT_EQ(other.exit_status, 0) << other.err;
  EXPECT_THAT(other.out, HasSubstr("RB_SIZE = 0x5"));  // the first field write survived the second
  EXPECT_THAT(other.out, HasSubstr("MC_SPACE = 0x4"));

  auto dump = RunBaregpu({"regs", "sim:navi31:regs", "dump", "osssys"});
  ASSERT_EQ(dump.exit_status, 0) << dump.err;
  EXPECT_THAT(dump.out, HasSubstr("IH_RB_CNTL"));
}

TEST(RegsCommandTest, DeviceErrorsNameTheProblem) {
  auto wide = RunBaregpu({"regs", "sim:navi31:regs", "write", "IH_RB_CNTL.RB_SIZE=64"});
  EXPECT_EQ(wide.exit_status, 2);
  EXPECT_THAT(wide.err, HasSubstr("does not fit"));
  auto field = RunBaregpu({"regs", "sim:navi31:regs", "write", "IH_RB_CNTL.NO_SUCH=1"});
  EXPECT_EQ(field.exit_status, 1);
  EXPECT_THAT(field.err, HasSubstr("has no field NO_SUCH"));
  EXPECT_EQ(RunBaregpu({"regs", "sim:navi31:regs", "dump"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"regs", "sim:navi31:regs", "poke", "X"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"regs", "sim:navi31:regs", "write", "SCRATCH_REG3"}).exit_status, 2);
  EXPECT_EQ(RunBaregpu({"regs", "sim:navi31:regs", "read", "NOT_A_REGISTER"}).exit_status, 1);
  EXPECT_EQ(RunBaregpu({"regs"}).exit_status, 2);
}

}  // namespace
}  // namespace cli
