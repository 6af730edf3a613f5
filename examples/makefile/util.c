unsigned long spin(unsigned long x, int n) {
  for (int i = 0; i < n; ++i)
    x = x * 2862933555777941757ul + 3037000493ul; // HOT-SPIN
  return x;
}
