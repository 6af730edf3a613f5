#include <stdio.h>
int dso_scale(int);
int main(void) {
  printf("%d\n", dso_scale(10));
  return 0;
}
