#!/usr/bin/python3
"""Lists every gfx1100 instruction tinygrad's AMD backend emits on a fixed set of workloads, and whether baregpu's
RDNA3 interpreter (am/sim/isa) runs each one and on which path.

  tools/tinygrad/instruction_survey.py [--device NULL:AMDLLVM:gfx1100 | BAREGPU] [--build build]
                                       [--objects DIR] [--markdown] [--only NAME...]

How the code objects are made: the workloads below run in a child process of Debian's /usr/bin/python3 with
tinygrad on PYTHONPATH, and every code object tinygrad's AMDLLVMCompiler returns is recorded (the compiler is wrapped,
nothing in tinygrad is changed). The default device, NULL:AMDLLVM:gfx1100, is tinygrad's NULL device with the
renderer and arch DEV=BAREGPU uses (AMDLLVMRenderer, gfx1100: python/baregpu/tinygrad.py), so the kernels are the
ones DEV=BAREGPU compiles, made offline in seconds without running them. --device BAREGPU runs the same workloads on
the virtual GPU (sim:navi31 through the baregpu Python package in --build) and also checks each result against
tinygrad's CPU device, which shows that the interpreter executes every instruction listed (an instruction it lacks
raises the SQ illegal-instruction interrupt and tinygrad's wait fails).

Each code object is disassembled with llvm-objdump-19 --mcpu=gfx1100. For each distinct mnemonic (the encoding
suffixes _e32/_e64/_dpp/_sdwa folded into the operation) the table gives the number of kernels using it, whether the
interpreter implements it (read from am/sim/isa's sources: the opcode constant is handled in the executing files, or
the operation belongs to a family handled as a whole, see Implemented()), and whether a fast path covers it.

The output is deterministic for one tinygrad and LLVM: kernels are de-duplicated by their bytes and sorted, the
table is sorted by mnemonic. Exit status: 0, or 1 when a workload failed, 77 when tinygrad or numpy is absent.
"""
import argparse
import collections
import hashlib
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
PYTHON = "/usr/bin/python3"
SKIP = 77
ISA = ROOT / "am/sim/isa"

# The child: runs the workloads with tinygrad and writes {workload: [code objects as hex]} and errors as JSON.
CHILD = r'''
import json, os, sys, traceback
import numpy as np
from tinygrad import Tensor, dtypes, Device
from tinygrad.helpers import Context
from tinygrad.runtime.support import compiler_llvm

captured = []
_compile = compiler_llvm.AMDLLVMCompiler.compile
def _recording_compile(self, src):
  lib = _compile(self, src)
  captured.append((lib, src))
  return lib
compiler_llvm.AMDLLVMCompiler.compile = _recording_compile

execute = os.environ["SURVEY_EXECUTE"] == "1"
rng = np.random.default_rng(14)

def data(shape, dt):
  if dt == dtypes.bool: return rng.integers(0, 2, shape).astype(np.bool_)
  if dtypes.is_int(dt) or dt == dtypes.uint8:
    lo, hi = (0, 200) if dtypes.is_unsigned(dt) else (-100, 100)
    return rng.integers(lo, hi, shape).astype(np.int64)
  return rng.standard_normal(shape).astype(np.float32)

def make(shape, dt, device):
  # Realized in its own type, so that both devices start from the same 16-bit (or 8-bit) values: the CPU device
  # would otherwise fuse the conversion from the f32 data into the workload and skip its rounding (LLVM's x86 backend
  # keeps half in f32 between operations).
  return Tensor(data(shape, dt), device=device).cast(dt).realize()

FLOATS = [dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.float64]
INTS = [dtypes.int8, dtypes.uint8, dtypes.int32, dtypes.int64]
ALL = FLOATS + INTS + [dtypes.bool]

def workloads():
  w = {}
  for n, m, k in [(64, 64, 64), (128, 128, 128), (33, 65, 17)]:
    w[f"matmul_f32_{n}x{m}x{k}"] = lambda d, n=n, m=m, k=k: (make((n, k), dtypes.float32, d) @
                                                             make((k, m), dtypes.float32, d))
  for tc in (1, 0):
    for dt in (dtypes.float16, dtypes.bfloat16):
      w[f"matmul_{dt.name}_tc{tc}"] = lambda d, dt=dt: make((64, 64), dt, d) @ make((64, 64), dt, d)
      w[f"matmul_{dt.name}_acc_f32_tc{tc}"] = lambda d, dt=dt: make((64, 64), dt, d).matmul(make((64, 64), dt, d),
                                                                                          dtype=dtypes.float32)
  for dt in (dtypes.float32, dtypes.float16, dtypes.int32):
    w[f"sum_{dt.name}"] = lambda d, dt=dt: make((256, 256), dt, d).sum(axis=1)
    w[f"sum_all_{dt.name}"] = lambda d, dt=dt: make((4096,), dt, d).sum()
    w[f"max_{dt.name}"] = lambda d, dt=dt: make((256, 256), dt, d).max(axis=0)
  w["mean_float"] = lambda d: make((64, 300), dtypes.float32, d).mean(axis=1)
  w["softmax_float"] = lambda d: make((64, 300), dtypes.float32, d).softmax(axis=-1)
  w["softmax_half"] = lambda d: make((64, 300), dtypes.float16, d).softmax(axis=-1)
  w["argmax_float"] = lambda d: make((64, 300), dtypes.float32, d).argmax(axis=-1)
  w["layernorm_float"] = lambda d: make((32, 128), dtypes.float32, d).layernorm()
  for dt in ALL:
    def ew(d, dt=dt):
      a, b = make((1000,), dt, d), make((1000,), dt, d)
      if dt == dtypes.bool: return (a & b) | (a ^ b.logical_not())
      out = [a + b, a * b, a.maximum(b), (a < b).where(a, b), (a == b).cast(dt), a.minimum(b)]
      if dt != dtypes.uint8: out.append(-a)
      if dtypes.is_float(dt): out += [a - b, a / (b.abs() + 1), a.abs()]
      else: out += [a - b, a // (b.abs() + 1), a % (b.abs() + 1), a & b, a | b, a ^ b, a << 2, a >> 1]
      return Tensor.stack(*[o.cast(dt) for o in out])
    w[f"elementwise_{dt.name}"] = ew
  for src in ALL:
    for dst in ALL:
      # A float out of an integer type's range converts to poison in LLVM IR (fptoui/fptosi): only in-range values.
      unsigned = dst in (dtypes.uint8, dtypes.bool) or dtypes.is_unsigned(dst)
      in_range = lambda x, s=src, t=dst: x.abs() if dtypes.is_float(s) and t != dtypes.bool and unsigned else x
      if src != dst:
        w[f"cast_{src.name}_to_{dst.name}"] = lambda d, s=src, t=dst, f=in_range: f(make((1000,), s, d)).cast(t)
  w["bitcast_f32_u32"] = lambda d: make((1000,), dtypes.float32, d).bitcast(dtypes.uint32)
  for dt in (dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.float64):
    for op in ("exp2", "log2", "sin", "sqrt", "reciprocal", "exp", "log", "cos", "tanh", "sigmoid", "rsqrt"):
      w[f"{op}_{dt.name}"] = lambda d, dt=dt, op=op: getattr(make((1000,), dt, d).abs() + 0.5, op)()
  w["conv2d_float"] = lambda d: make((2, 4, 16, 16), dtypes.float32, d).conv2d(make((8, 4, 3, 3), dtypes.float32, d))
  w["conv2d_half"] = lambda d: make((2, 4, 16, 16), dtypes.float16, d).conv2d(make((8, 4, 3, 3), dtypes.float16, d))
  w["max_pool2d_float"] = lambda d: make((2, 4, 16, 16), dtypes.float32, d).max_pool2d()
  indices = lambda d, high, shape: Tensor(rng.integers(0, high, shape).astype(np.int32), device=d)
  w["gather_float"] = lambda d: make((64, 32), dtypes.float32, d).gather(1, indices(d, 32, (64, 8)))
  w["index_float"] = lambda d: make((100, 16), dtypes.float32, d)[indices(d, 100, (40,))]
  w["embedding_float"] = lambda d: indices(d, 50, (4, 10)).one_hot(50).float() @ make((50, 16), dtypes.float32, d)
  w["where_float"] = lambda d: (make((1000,), dtypes.float32, d) > 0).where(make((1000,), dtypes.float32, d), 3.0)
  w["cumsum_float"] = lambda d: make((300,), dtypes.float32, d).cumsum()
  w["arange_int"] = lambda d: Tensor.arange(1000).to(d) * 3
  # The isa_bench kernels (tests/bench/tinygrad_kernels): a 256x256 f32 matmul and a 1 Mi-element sum.
  w["bench_matmul_f32_256"] = lambda d: make((256, 256), dtypes.float32, d) @ make((256, 256), dtypes.float32, d)
  w["bench_sum_f32_1m"] = lambda d: make((1 << 20,), dtypes.float32, d).sum()
  return w

def to_numpy(t):
  # numpy has no bfloat16: compare those through float32.
  return (t.cast(dtypes.float32) if t.dtype == dtypes.bfloat16 else t).numpy()

def run_one(name, fn, device):
  # TC (tensor cores) is read when the kernel is scheduled; the _tc0 workloads ask for plain FMAs.
  tc = 0 if name.endswith("_tc0") else 1
  state = rng.bit_generator.state
  with Context(TC=tc):
    result = fn(device).realize()
    if not execute: return None
    got = to_numpy(result)
  rng.bit_generator.state = state
  try:
    with Context(TC=tc):
      want = to_numpy(fn("CPU").realize())
  except Exception as e:  # the reference's own failure: the device ran, its result is not checked
    return f"unchecked: the CPU reference failed: {type(e).__name__}: {str(e).splitlines()[0][:120]}"
  if got.dtype.kind == "f" or want.dtype.kind == "f":
    # Half and bfloat16 arithmetic on the CPU device keeps f32 precision between operations (LLVM's x86 backend
    # promotes it) where the GPU rounds each operation to 16 bits, so a workload with 16-bit floats anywhere (also
    # matmuls accumulating in f32: their products) gets the 16-bit type's tolerance.
    tol = 5e-2 if "bf16" in name else 1e-2 if "half" in name else 1e-4
    close = np.isclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol, equal_nan=True)
    if not close.all():
      where = tuple(np.argwhere(~close)[0])
      return (f"differs from CPU at {int((~close).sum())} elements, first {list(where)}: {got[where]!r} against "
              f"{want[where]!r}")
  elif not np.array_equal(got, want):
    return f"differs from CPU at {int(np.sum(got != want))} elements"
  return None

device = os.environ["SURVEY_DEVICE"]
only = set(filter(None, os.environ.get("SURVEY_ONLY", "").split(",")))
results = {}
for name, fn in workloads().items():
  if only and name not in only: continue
  captured.clear()
  error = None
  try:
    error = run_one(name, fn, device)
  except Exception as e:
    error = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
  results[name] = {"objects": [lib.hex() for lib, _ in captured], "sources": [src for _, src in captured],
                   "error": error}
  print(f"{name}: {len(captured)} kernels{'' if error is None else ', ' + error}", file=sys.stderr, flush=True)
json.dump(results, open(os.environ["SURVEY_OUT"], "w"))
'''


def Camel(name):
  """v_cvt_pk_norm_i16_f32 -> kVCvtPkNormI16F32, the spelling of am/sim/isa/opcodes.h."""
  return "k" + "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def InterpreterFacts():
  """What the interpreter's sources say: opcode constants per namespace, those the executing files name, the fast
  VALU operations (FastValuOf's cases) and the VOPD operations Vopd handles."""
  opcodes = {}
  namespace = None
  for line in (ISA / "opcodes.h").read_text().splitlines():
    if m := re.match(r"namespace (\w+) \{", line):
      namespace = m.group(1)
    elif m := re.match(r"\s+(k\w+) = (\d+),", line):
      opcodes.setdefault(m.group(1), set()).add(namespace)
  executing = "".join((ISA / f).read_text() for f in ("vector.cc", "scalar.cc", "memory.cc", "wmma.cc",
                                                       "workgroup_runner.cc"))
  named = set(re.findall(r"\b(?:\w+)::(k\w+)\b", executing))
  vector = (ISA / "vector.cc").read_text()
  fast_body = vector[vector.index("FastValu FastValuOf("):]
  fast_body = fast_body[:fast_body.index("\n}\n")]
  fast = set(re.findall(r"case (?:vop3|\d+ \+ vop[12])::(k\w+):", fast_body))
  vopd_body = vector[vector.index("WorkgroupRunner::Vopd("):]
  vopd = set(re.findall(r"case (kDual\w+):", vopd_body))
  fast_vopd_body = vector[vector.index("WorkgroupRunner::FastVopd("):vector.index("WorkgroupRunner::Vopd(")]
  fast_vopd = set(re.findall(r"case (kDual\w+):", fast_vopd_body))
  return opcodes, named, fast, (vopd, fast_vopd)


# VOPC compares are executed from a table built from their names (vector.cc CompareTable), for these types.
COMPARE_TYPES = {"f16", "f32", "f64", "i16", "i32", "i64", "u16", "u32", "u64"}
# Memory instructions are executed by family (memory.cc decodes width, sign and direction from the opcode); a
# mnemonic of these families is implemented when its constant exists in the family's namespace and the family's
# handler names at least one of its constants. The fast path covers whole-dword GLOBAL/FLAT loads and stores
# (memory.cc, setup_.fast_paths: bytes >= 4, no d16).
FAST_MEMORY = re.compile(r"^(global|flat)_(load|store)_b(32|64|96|128)$")


def Classify(mnemonic, facts):
  """(implemented, fast, note) for one mnemonic as llvm-objdump prints it (no encoding suffix)."""
  opcodes, named, fast, vopd = facts
  if mnemonic.startswith("v_dual_"):
    # A VOPD word holds two operations; objdump prints "v_dual_X :: v_dual_Y". The table lists each half.
    constant = "kDual" + Camel(mnemonic[len("v_dual_"):])[1:]
    return constant in vopd[0], constant in vopd[1], "VOPD half"
  m = re.match(r"v_cmpx?_(\w+)_([fiu]\d+)$", mnemonic)
  if m:
    kind = m.group(2)
    cond = m.group(1)
    fast_cmp = kind in ("i32", "u32", "f32") and cond != "class"
    return kind in COMPARE_TYPES, fast_cmp, "VOPC (CompareTable)"
  if mnemonic.startswith("v_wmma_"):
    # wmma.cc runs the six gfx11 WMMAs by format (WmmaFormatOf), not by constant name.
    return True, False, "wmma.cc"
  constant = Camel(mnemonic)
  namespaces = opcodes.get(constant)
  if namespaces is None:
    return False, False, "no opcode constant"
  family = mnemonic.split("_")[0]
  if family in ("global", "flat", "scratch", "ds", "buffer"):
    return True, bool(FAST_MEMORY.match(mnemonic)), "memory family"
  if mnemonic.startswith(("s_waitcnt", "s_delay_alu", "s_clause", "s_nop", "s_endpgm", "s_sendmsg",
                          "s_code_end", "s_barrier")) or constant in named:
    return True, constant in fast, ""
  return False, False, "constant never handled"


def Mnemonics(listing):
  """Mnemonics in an llvm-objdump listing, the encoding suffixes folded, both halves of a VOPD pair."""
  found = []
  for line in listing.splitlines():
    m = re.match(r"^\s+([a-z][a-z0-9_]+)(.*?)//", line)
    if not m:
      continue
    names = [m.group(1)]
    if " :: " in line:
      names.append(line.split(" :: ")[1].split()[0])
    for name in names:
      name = re.sub(r"_e(32|64)(_dpp)?$|_dpp$|_sdwa$", "", name)
      found.append(name)
  return found


def main():
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--device", default="NULL:AMDLLVM:gfx1100",
                      help="tinygrad device: NULL:AMDLLVM:gfx1100 (compile only) or BAREGPU (run and check on sim)")
  parser.add_argument("--build", default=str(ROOT / "build"), help="the build tree whose python/ --device BAREGPU uses")
  parser.add_argument("--sim-device", default="sim:navi31:survey", help="with --device BAREGPU: the virtual GPU")
  parser.add_argument("--tinygrad", default=os.environ.get("BAREGPU_TINYGRAD",
                                                           str(ROOT.parent / "shared/vendor/tinygrad")))
  parser.add_argument("--objdump", default="llvm-objdump-19")
  parser.add_argument("--objects", help="write each distinct code object here as KERNEL-HASH.co, and the LLVM IR "
                      "tinygrad compiled it from as KERNEL-HASH.ll")
  parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
  parser.add_argument("--compact", action="store_true",
                      help="print the table as lines of `mnemonic kernels` by prefix (NOTES.md): * marks a fast "
                      "path, ! an instruction the interpreter lacks")
  parser.add_argument("--only", nargs="*", default=[], help="run only these workloads")
  args = parser.parse_args()
  if not (pathlib.Path(args.tinygrad) / "tinygrad").is_dir():
    print(f"skip: tinygrad is not at {args.tinygrad}")
    return SKIP
  if subprocess.run([PYTHON, "-c", "import numpy"], capture_output=True).returncode != 0:
    print(f"skip: {PYTHON} has no numpy (python3-numpy)")
    return SKIP

  work = tempfile.TemporaryDirectory(prefix="baregpu-survey-")
  out = pathlib.Path(work.name) / "objects.json"
  env = dict(os.environ, SURVEY_DEVICE=args.device, SURVEY_OUT=str(out), SURVEY_ONLY=",".join(args.only),
             SURVEY_EXECUTE="1" if args.device.upper().startswith("BAREGPU") else "0",
             CACHEDB=str(pathlib.Path(work.name) / "cache.db"), CACHELEVEL="0",
             # Compiling in tinygrad's worker processes would bypass the recording wrapper.
             PARALLEL="0", DEV=args.device.split(":")[0] if
             args.device.upper().startswith("BAREGPU") else args.device)
  env["PYTHONPATH"] = args.tinygrad
  if env["SURVEY_EXECUTE"] == "1":
    env["PYTHONPATH"] = f"{pathlib.Path(args.build) / 'python'}:{args.tinygrad}"
    env["BAREGPU_SIM_DIR"] = work.name
    env["BAREGPU_DEVICE"] = args.sim_device
    # The reference: tinygrad's CPU device with its LLVM renderer (run_suite.py's cpu backend); its default, clang's C
    # renderer, cannot compile bfloat16 here.
    env["DEV"] = "BAREGPU;CPU:LLVM"
  child = subprocess.run([PYTHON, "-c", CHILD], env=env, cwd=work.name)
  if child.returncode != 0 or not out.exists():
    print(f"the workload process failed (exit status {child.returncode})")
    return 1
  results = json.loads(out.read_text())

  facts = InterpreterFacts()
  kernels = {}  # sha256 -> (kernel name, set of mnemonics)
  failures, unchecked = [], []
  per_workload = {}
  for workload, result in sorted(results.items()):
    if result["error"] and result["error"].startswith("unchecked:"):
      unchecked.append(f"{workload}: {result['error']}")
    elif result["error"]:
      failures.append(f"{workload}: {result['error']}")
    per_workload[workload] = 0
    for blob, source in zip(result["objects"], result["sources"]):
      code = bytes.fromhex(blob)
      digest = hashlib.sha256(code).hexdigest()[:12]
      per_workload[workload] += 1
      if digest in kernels:
        continue
      path = pathlib.Path(work.name) / f"{digest}.co"
      path.write_bytes(code)
      listing = subprocess.run([args.objdump, "-d", "--mcpu=gfx1100", str(path)], capture_output=True, text=True,
                               check=True).stdout
      name = (re.findall(r"^[0-9a-f]+ <(\w+)>:", listing, re.M) or ["?"])[0]
      kernels[digest] = (name, collections.Counter(Mnemonics(listing)))
      if args.objects:
        pathlib.Path(args.objects).mkdir(parents=True, exist_ok=True)
        (pathlib.Path(args.objects) / f"{name}-{digest}.co").write_bytes(code)
        (pathlib.Path(args.objects) / f"{name}-{digest}.ll").write_text(source)

  uses = collections.Counter()
  static = collections.Counter()
  for name, counter in kernels.values():
    for mnemonic, count in counter.items():
      uses[mnemonic] += 1
      static[mnemonic] += count
  rows = []
  for mnemonic in sorted(uses):
    implemented, fast, note = Classify(mnemonic, facts)
    rows.append((mnemonic, uses[mnemonic], static[mnemonic], implemented, fast, note))
  print(f"tinygrad {args.tinygrad}, device {args.device}: {len(results)} workloads, {len(kernels)} distinct kernels, "
        f"{len(rows)} distinct mnemonics, {sum(1 for r in rows if not r[3])} not implemented")
  if args.compact:
    groups = collections.defaultdict(list)
    for mnemonic, kernel_count, occurrences, implemented, fast, note in rows:
      family = mnemonic.split("_")[0] if not mnemonic.startswith(("v_cmp", "v_dual")) else mnemonic[:6]
      groups[family].append(f"{mnemonic} {kernel_count}{'*' if fast else ''}{'' if implemented else '!'}")
    for family in sorted(groups):
      line = f"  - {family}:"
      for item in groups[family]:
        if len(line) + len(item) + 2 > 118:
          print(line + ",")
          line = "    " + item
        else:
          line += ("" if line.endswith(":") else ",") + " " + item
      print(line)
  elif args.markdown:
    print("| mnemonic | kernels | occurrences | interpreter | fast path | note |")
    print("|---|---:|---:|---|---|---|")
    for mnemonic, kernel_count, occurrences, implemented, fast, note in rows:
      print(f"| {mnemonic} | {kernel_count} | {occurrences} | {'yes' if implemented else '**no**'} | "
            f"{'yes' if fast else ''} | {note} |")
  else:
    print(f"{'mnemonic':36} {'kernels':>7} {'occurs':>7}  impl fast  note")
    for mnemonic, kernel_count, occurrences, implemented, fast, note in rows:
      print(f"{mnemonic:36} {kernel_count:7} {occurrences:7}  {'yes ' if implemented else 'NO  '} "
            f"{'yes ' if fast else '    '}  {note}")
  for failure in failures:
    print(f"workload failed: {failure}")
  for line in unchecked:
    print(f"workload ran, result {line}")
  return 1 if failures else 0


if __name__ == "__main__":
  sys.exit(main())
