int dso_scale(int x) {
  int s = 0;
  for (int i = 0; i < x; ++i)
    s += i ^ x;
  return s;
}
