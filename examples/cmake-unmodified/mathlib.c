unsigned long mix(unsigned long x, int n) {
  for (int i = 0; i < n; ++i)
    x = (x ^ (x >> 31)) * 0x9e3779b97f4a7c15ul + (unsigned long)i; // HOT-MIX
  return x;
}
