// Without -fcausal-profile, clang's command lines (-###) are the same as
// when plain clang / clang++ is run: compile, link and both, C and C++.
// RUN: sh %S/Inputs/make-prefix.sh %causal-clang %t/p
// RUN: rm -rf %t/w && mkdir -p %t/w && touch %t/w/x.o
// RUN: cd %t/w && %t/p/bin/causal-clang -### -O2 -c %s -o y.o 2> causal.compile && %clang -### -O2 -c %s -o y.o 2> plain.compile
// RUN: diff plain.compile causal.compile
// RUN: cd %t/w && %t/p/bin/causal-clang -### x.o -o exe 2> causal.link && %clang -### x.o -o exe 2> plain.link
// RUN: diff plain.link causal.link
// RUN: cd %t/w && %t/p/bin/causal-clang -### -flto=thin -c %s -o y.o 2> causal.lto && %clang -### -flto=thin -c %s -o y.o 2> plain.lto
// RUN: diff plain.lto causal.lto
// RUN: cd %t/w && %t/p/bin/causal-clang -### -flto -fuse-ld=lld x.o -o exe 2> causal.lld && %clang -### -flto -fuse-ld=lld x.o -o exe 2> plain.lld
// RUN: diff plain.lld causal.lld
// RUN: cd %t/w && %t/p/bin/causal-clang++ -### -x c++ -c %s -o y.o 2> causal.cxx && %clangxx -### -x c++ -c %s -o y.o 2> plain.cxx
// RUN: diff plain.cxx causal.cxx
// RUN: cd %t/w && %t/p/bin/causal-clang++ -### x.o -o exe 2> causal.cxxlink && %clangxx -### x.o -o exe 2> plain.cxxlink
// RUN: diff plain.cxxlink causal.cxxlink
// The comparison is not vacuous: -fcausal-profile changes the command lines.
// RUN: cd %t/w && %t/p/bin/causal-clang -fcausal-profile -### -O2 -c %s -o y.o 2> profiled.compile
// RUN: not diff plain.compile profiled.compile
// RUN: cd %t/w && %t/p/bin/causal-clang -fcausal-profile -### x.o -o exe 2> profiled.link
// RUN: not diff plain.link profiled.link

int main(void) { return 0; }
