"""Prints an IR module that calls every function of a CAUSAL_HOOK line (read
from the causal/hooks.def given as argument) once, directly."""
import re
import sys

# CAUSAL_HOOK(KIND, OUTCOME, RET, NAME, ...): the fourth argument.
names = re.findall(r"^CAUSAL_HOOK\((?:[^,]*,){3}\s*(\w+)\s*,", open(sys.argv[1]).read(), re.M)
print('target triple = "x86_64-unknown-linux-gnu"')
for name in names:
    print("declare i32 @%s(ptr)" % name)
print("define void @all(ptr %p) {")
for name in names:
    print("  call i32 @%s(ptr %%p)" % name)
print("  ret void")
print("}")
