"""Prints the first bytes of exported functions of an ELF64 library (from .dynsym), to
disassemble elsewhere: which instruction a uprobe at a function's entry replaces decides
whether the kernel emulates it or single-steps it out of line (a second trap).

  entrybytes.py LIBRARY SYMBOL...
"""
import struct, sys

path, want = sys.argv[1], set(sys.argv[2:])
data = open(path, "rb").read()
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
for s in secs:
    if s[1] == 11:  # SHT_DYNSYM
        strtab = secs[s[6]]
        for i in range(s[5] // 24):
            name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", data, s[4] + i * 24)
            n = data[strtab[4] + name:data.index(b"\0", strtab[4] + name)].decode()
            if n in want and value:
                # file offset of the address: through the section that holds it
                for t in secs:
                    if t[3] <= value < t[3] + t[5] and t[1] != 8:
                        off = value - t[3] + t[4]
                        print(n, hex(value), data[off:off + 16].hex())
                        break
