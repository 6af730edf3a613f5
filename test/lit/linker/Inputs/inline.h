// An inline function: every TU that uses it gets a COMDAT copy, the linker
// keeps one and discards the others (whose line sequences must be dropped).
#pragma once
inline int mix(int x) {
  int r = 0;
  for (int i = 0; i < x; ++i)
    r += i * x;
  return r;
}
