// Linked into the executable as a DT_NEEDED library.
unsigned long linked_work(int n) {
  unsigned long x = 88172645463325252ul;
  for (int i = 0; i < n; ++i)
    x ^= x << 13, x ^= x >> 7, x ^= x << 17; // HOT-LINKED
  return x;
}
