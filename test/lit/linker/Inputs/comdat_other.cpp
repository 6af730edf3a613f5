#include "inline.h"
int other(int v) { return mix(v + 1); }
