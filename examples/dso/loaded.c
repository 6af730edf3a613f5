// Opened with dlopen by the executable.
unsigned long loaded_work(int n) {
  unsigned long h = 1469598103934665603ul;
  for (int i = 0; i < n; ++i)
    h = (h ^ (unsigned long)i) * 1099511628211ul; // HOT-LOADED
  return h;
}
