#include "inline.h"
#include <cstdio>
int other(int);
int main(int argc, char **) {
  std::printf("%d\n", mix(argc + 2) + other(argc));
  return 0;
}
