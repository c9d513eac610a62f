#!/usr/bin/env python3
"""Generates the ctypes declarations of hcq/hcq.h: its enum, #define constants, structs and functions.

usage: gen_ctypes.py HCQ_H OUTPUT_PY

The Python package must not keep a hand-written copy of what the header defines, so its bindings come from the
header itself. The header is plain C of a narrow shape (one typedef enum, #define constants, typedef structs of
scalar and char-array fields, prototypes of scalar, pointer, array and struct-by-value parameters); anything else
is an error naming the line, so a header change that this parser does not understand fails the build instead of
producing wrong bindings.
"""
import re
import sys

# C type (qualifiers removed, spaces normalised) -> ctypes expression.
SCALARS = {
    "void": "None",
    "int": "ctypes.c_int",
    "double": "ctypes.c_double",
    "size_t": "ctypes.c_size_t",
    "uint32_t": "ctypes.c_uint32",
    "uint64_t": "ctypes.c_uint64",
    "char": "ctypes.c_char",
    "hcq_status": "ctypes.c_int",
}


class HeaderError(Exception):
    pass


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def ctype(decl, structs, handles, line):
    """The ctypes expression of a parameter or return type `decl` (without the name)."""
    t = re.sub(r"\bconst\b", "", decl)
    t = re.sub(r"\s+", " ", t).strip()
    t = t.replace(" *", "*")
    stars = t.count("*")
    base = t.replace("*", "").strip()
    if base in handles:
        # Opaque handles travel as void pointers; a handle array or out-parameter as a pointer to them.
        return "ctypes.c_void_p" if stars == 1 else "ctypes.POINTER(ctypes.c_void_p)"
    if base == "void" and stars >= 1:
        return "ctypes.c_void_p" if stars == 1 else "ctypes.POINTER(ctypes.c_void_p)"
    if base == "char" and stars == 1:
        # Strings in (const char*) are bytes; char* out-buffers are written through a c_char array.
        return "ctypes.c_char_p" if "const" in decl else "ctypes.POINTER(ctypes.c_char)"
    if base in structs:
        inner = base
    elif base in SCALARS:
        inner = SCALARS[base]
    else:
        raise HeaderError(f"line {line}: unknown type {decl!r}")
    for _ in range(stars):
        inner = f"ctypes.POINTER({inner})"
    return inner


def parse(text):
    lines = strip_comments(text)
    enums, defines, structs, functions, handles = {}, {}, {}, [], []
    for m in re.finditer(r"typedef struct (\w+) (\w+);", lines):
        handles.append(m.group(2))
    for m in re.finditer(r"typedef enum \{(.*?)\} (\w+);", lines, flags=re.S):
        members = {}
        value = -1
        for item in filter(None, (x.strip() for x in m.group(1).split(","))):
            name, _, expr = item.partition("=")
            value = int(expr, 0) if expr.strip() else value + 1
            members[name.strip()] = value
        enums[m.group(2)] = members
    for number, raw in enumerate(lines.split("\n"), 1):
        d = re.match(r"#define (HCQ_\w+) (.+)$", raw.strip())
        if d:
            expr = re.sub(r"(\d+)u\b", r"\1", d.group(2).strip())
            if not re.fullmatch(r"[\w\s()<>|+]+", expr):
                raise HeaderError(f"line {number}: #define {d.group(1)} is not a constant expression: {expr!r}")
            defines[d.group(1)] = eval(expr, {"__builtins__": {}}, dict(defines))  # names defined above it only
    for m in re.finditer(r"typedef struct \{(.*?)\} (\w+);", lines, flags=re.S):
        fields = []
        for decl in filter(None, (x.strip() for x in m.group(1).split(";"))):
            f = re.fullmatch(r"(\w+) (.+)", decl)
            if not f:
                raise HeaderError(f"struct {m.group(2)}: cannot read field {decl!r}")
            for name in (x.strip() for x in f.group(2).split(",")):
                a = re.fullmatch(r"(\w+)\[(\w+)\]", name)
                base = ctype(f.group(1), structs, handles, m.group(2))
                fields.append((a.group(1), f"{base} * {a.group(2)}") if a else (name, base))
        structs[m.group(2)] = fields
    # Prototypes: statements at file scope that end in ");" and are not inline definitions.
    body = re.sub(r"static inline [^{]*\{.*?\n\}", "", lines, flags=re.S)
    body = re.sub(r"typedef (enum|struct) \{.*?\} \w+;", "", body, flags=re.S)
    for m in re.finditer(r"^([\w ]+?\**)\s*(hcq_\w+)\(([^)]*)\);", body, flags=re.M):
        ret, name, params = m.group(1), m.group(2), m.group(3)
        line = lines[: m.start()].count("\n") + 1
        args = []
        if params.strip() != "void":
            for p in (x.strip() for x in params.split(",")):
                a = re.fullmatch(r"(.*?)(\w+)(\[\d+\])?", p)
                if not a:
                    raise HeaderError(f"line {line}: cannot read parameter {p!r} of {name}")
                args.append(ctype(a.group(1) + ("*" if a.group(3) else ""), structs, handles, line))
        functions.append((name, ctype(ret, structs, handles, line), args))
    if not functions or "hcq_status" not in enums:
        raise HeaderError("no functions or no hcq_status enum: is this hcq/hcq.h?")
    return enums, defines, structs, functions


def render(enums, defines, structs, functions):
    out = ['"""ctypes declarations of hcq/hcq.h, generated by python/gen_ctypes.py at build time. Do not edit."""',
           "import ctypes", ""]
    for name, members in enums.items():
        for member, value in members.items():
            out.append(f"{member} = {value}")
        out.append(f"{name.upper()}_NAMES = {{{', '.join(f'{v}: {m!r}' for m, v in members.items())}}}")
    out += [f"{name} = {value}" for name, value in defines.items()] + [""]
    for name, fields in structs.items():
        out.append(f"class {name}(ctypes.Structure):")
        out.append("  _fields_ = [" + ", ".join(f"({f!r}, {t})" for f, t in fields) + "]")
        out.append("")
    out.append("# name -> (restype, argtypes)")
    out.append("FUNCTIONS = {")
    for name, ret, args in functions:
        out.append(f"  {name!r}: ({ret}, [{', '.join(args)}]),")
    out.append("}")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            generated = render(*parse(f.read()))
    except (OSError, HeaderError) as e:
        print(f"gen_ctypes.py: {argv[1]}: {e}", file=sys.stderr)
        return 1
    with open(argv[2], "w") as f:
        f.write(generated)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
