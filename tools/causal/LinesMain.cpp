//===- LinesMain.cpp - libexec/causal/causal-lines, run by `causal lines` -===//
#include "Commands.h"

int main(int argc, char **argv) {
  return causal::linesCommand(causal::Args(argv + 1, argv + argc));
}
