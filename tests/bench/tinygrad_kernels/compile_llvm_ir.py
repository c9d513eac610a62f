#!/usr/bin/python3
"""Compiles LLVM IR that tinygrad rendered for gfx1100 into the relocatable code object tinygrad would make of it.

  compile_llvm_ir.py INPUT.ll OUTPUT.o [--llvm /usr/lib/llvm-19/lib/libLLVM.so.1]

tinygrad's AMD backend (tinygrad/runtime/support/compiler_llvm.py, AMDLLVMCompiler) does not run llc: it calls
libLLVM's C API in process, the target machine for amdgcn-amd-amdhsa, gfx1100, "+cumode", PIC relocations and the
default code generation level, the new pass manager's default<O2> pipeline with loop unrolling, loop and SLP
vectorization and verification switched on, then emits an object file. opt-19 + llc-19 with the same options give
different code (their pipeline options differ), so this script makes the same C API calls through ctypes. The
output is byte for byte what tinygrad's compiler returns for the same IR and libLLVM (the isa_bench kernels were
checked against tools/tinygrad/instruction_survey.py --objects).
"""
import argparse
import ctypes
import ctypes.util
import pathlib
import sys

TRIPLE = b"amdgcn-amd-amdhsa"
CPU = b"gfx1100"
FEATURES = b"+cumode"
# llvm-c/TargetMachine.h: LLVMCodeGenLevelDefault = 2, LLVMRelocPIC = 2, LLVMCodeModelDefault = 0,
# LLVMObjectFile = 1.
CODEGEN_LEVEL_DEFAULT, RELOC_PIC, CODE_MODEL_DEFAULT, OBJECT_FILE = 2, 2, 0, 1


def Compile(llvm, ir: bytes) -> bytes:
  p = ctypes.c_void_p
  for name in ("Target", "TargetInfo", "TargetMC", "AsmParser", "AsmPrinter"):
    getattr(llvm, f"LLVMInitializeAMDGPU{name}")()
  error = ctypes.c_char_p()
  target = p()
  if llvm.LLVMGetTargetFromTriple(TRIPLE, ctypes.byref(target), ctypes.byref(error)):
    raise RuntimeError(error.value.decode())
  llvm.LLVMCreateTargetMachine.restype = p
  machine = llvm.LLVMCreateTargetMachine(target, TRIPLE, CPU, FEATURES, CODEGEN_LEVEL_DEFAULT, RELOC_PIC,
                                         CODE_MODEL_DEFAULT)
  llvm.LLVMCreatePassBuilderOptions.restype = p
  options = p(llvm.LLVMCreatePassBuilderOptions())
  for setter in ("LoopUnrolling", "LoopVectorization", "SLPVectorization", "VerifyEach"):
    getattr(llvm, f"LLVMPassBuilderOptionsSet{setter}")(options, 1)
  llvm.LLVMContextCreate.restype = p
  context = p(llvm.LLVMContextCreate())
  llvm.LLVMCreateMemoryBufferWithMemoryRangeCopy.restype = p
  source = p(llvm.LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, len(ir), b"src"))
  module = p()
  if llvm.LLVMParseIRInContext(context, source, ctypes.byref(module), ctypes.byref(error)):
    raise RuntimeError(error.value.decode())
  if llvm.LLVMVerifyModule(module, 2, ctypes.byref(error)):  # LLVMReturnStatusAction
    raise RuntimeError(error.value.decode())
  if llvm.LLVMRunPasses(module, b"default<O2>", p(machine), options):
    raise RuntimeError("LLVMRunPasses failed")
  buffer = p()
  if llvm.LLVMTargetMachineEmitToMemoryBuffer(p(machine), module, OBJECT_FILE, ctypes.byref(error),
                                             ctypes.byref(buffer)):
    raise RuntimeError(error.value.decode())
  llvm.LLVMGetBufferStart.restype = p
  llvm.LLVMGetBufferSize.restype = ctypes.c_size_t
  return ctypes.string_at(llvm.LLVMGetBufferStart(buffer), llvm.LLVMGetBufferSize(buffer))


def main():
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("input")
  parser.add_argument("output")
  parser.add_argument("--llvm", default="libLLVM-19.so", help="the libLLVM shared library (Debian's llvm-19)")
  args = parser.parse_args()
  llvm = ctypes.CDLL(args.llvm)
  pathlib.Path(args.output).write_bytes(Compile(llvm, pathlib.Path(args.input).read_bytes()))
  return 0


if __name__ == "__main__":
  sys.exit(main())
