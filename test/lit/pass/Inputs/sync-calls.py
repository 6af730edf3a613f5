"""Prints an IR module that calls every function of CAUSAL_SYNC_FUNCTIONS
(read from the abi.h given as argument) once, directly."""
import re
import sys

names = re.findall(r"^\s*X\((\w+)\)", open(sys.argv[1]).read(), re.M)
print('target triple = "x86_64-unknown-linux-gnu"')
for name in names:
    print("declare i32 @%s(ptr)" % name)
print("define void @all(ptr %p) {")
for name in names:
    print("  call i32 @%s(ptr %%p)" % name)
print("  ret void")
print("}")
