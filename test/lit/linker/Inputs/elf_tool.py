"""Finds or damages the causal_lines section of an ELF file, for tests.

usage: elf_tool.py FILE offset        prints the section's file offset
       elf_tool.py FILE magic         overwrites the magic
       elf_tool.py FILE rows          claims a huge row count
       elf_tool.py FILE swap-lines    exchanges the lines of the first two
                                      rows that have different lines
"""
import struct
import sys


def section(data, wanted):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    def header(i):
        return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
    strtab = header(shstrndx)
    for i in range(shnum):
        h = header(i)
        start = strtab[4] + h[0]
        name = data[start:data.index(b"\0", start)].decode()
        if name == wanted:
            return h[4], h[5]  # offset, size
    sys.exit("no section " + wanted)


def main():
    path, what = sys.argv[1], sys.argv[2]
    data = bytearray(open(path, "rb").read())
    off, size = section(data, "causal_lines")
    if what == "offset":
        print(off)
        return
    if what == "magic":
        data[off:off + 8] = b"NOTCAUSL"
    elif what == "rows":
        struct.pack_into("<I", data, off + 32, 0x7FFFFFFF)
    elif what == "swap-lines":
        rows_offset, = struct.unpack_from("<I", data, off + 48)
        num_rows, = struct.unpack_from("<I", data, off + 32)
        rows = [struct.unpack_from("<II", data, off + rows_offset + 8 * i) for i in range(num_rows)]
        with_line = [i for i, r in enumerate(rows) if r[1] != 0xFFFFFFFF]
        for j in with_line[1:]:
            if rows[j][1] != rows[with_line[0]][1]:
                i = with_line[0]
                struct.pack_into("<I", data, off + rows_offset + 8 * i + 4, rows[j][1])
                struct.pack_into("<I", data, off + rows_offset + 8 * j + 4, rows[i][1])
                break
        else:
            sys.exit("no two rows with different lines")
    else:
        sys.exit("unknown action " + what)
    open(path, "wb").write(data)


main()
