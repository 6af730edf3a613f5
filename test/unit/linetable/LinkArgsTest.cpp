//===- LinkArgsTest.cpp - What causal-ld recognises on a linker command line -===//
#include "LinkArgs.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using causal::linker::analyzeLinkArgs;
using causal::linker::argsWithoutStrip;
using causal::linker::LinkArgs;

namespace {

// What clang 19 passes to ld for `clang hello.c -o hello` on Debian.
std::vector<std::string> clangLinkLine() {
  return {"--hash-style=gnu",
          "--build-id",
          "--eh-frame-hdr",
          "-m",
          "elf_x86_64",
          "-pie",
          "-dynamic-linker",
          "/lib64/ld-linux-x86-64.so.2",
          "-o",
          "hello",
          "/lib/x86_64-linux-gnu/Scrt1.o",
          "-L/usr/lib/gcc/x86_64-linux-gnu/12",
          "/tmp/hello.o",
          "-lgcc",
          "--as-needed",
          "-lgcc_s",
          "--no-as-needed",
          "-lc"};
}

TEST(LinkArgs, OrdinaryClangLink) {
  LinkArgs L = analyzeLinkArgs(clangLinkLine());
  EXPECT_EQ(L.Output, "hello");
  EXPECT_TRUE(L.HasInputs);
  EXPECT_FALSE(L.InfoOnly);
  EXPECT_FALSE(L.Relocatable);
  EXPECT_FALSE(L.Static);
  EXPECT_FALSE(L.Shared);
  EXPECT_FALSE(L.StripAll);
  EXPECT_FALSE(L.StripDebug);
  EXPECT_FALSE(L.UsesPlugin);
}

TEST(LinkArgs, OutputSpellings) {
  EXPECT_EQ(analyzeLinkArgs({"a.o", "-oout1"}).Output, "out1");
  EXPECT_EQ(analyzeLinkArgs({"a.o", "--output=out2"}).Output, "out2");
  EXPECT_EQ(analyzeLinkArgs({"a.o", "--output", "out3"}).Output, "out3");
  EXPECT_EQ(analyzeLinkArgs({"a.o"}).Output, "a.out");
  // Options that merely start with 'o' are not the output.
  EXPECT_EQ(analyzeLinkArgs({"a.o", "--oformat", "elf64-x86-64"}).Output, "a.out");
  EXPECT_EQ(analyzeLinkArgs({"a.o", "-omagic"}).Output, "a.out");
}

TEST(LinkArgs, ValuesAreNotMistakenForOptions) {
  // "-s" here is the value of -soname/-z/-u, not strip-all.
  LinkArgs L = analyzeLinkArgs({"a.o", "-soname", "-s", "-u", "-S", "-o", "x"});
  EXPECT_FALSE(L.StripAll);
  EXPECT_FALSE(L.StripDebug);
  EXPECT_EQ(L.Output, "x");
  L = analyzeLinkArgs(
      {"a.o", "-plugin", "/usr/lib/llvm-19/lib/LLVMgold.so", "-plugin-opt=thinlto", "-o", "y"});
  EXPECT_TRUE(L.UsesPlugin);
  EXPECT_EQ(L.Output, "y");
}

TEST(LinkArgs, ModesThatChangeWhatCausalLdDoes) {
  EXPECT_TRUE(analyzeLinkArgs({"-r", "a.o", "-o", "b.o"}).Relocatable);
  EXPECT_TRUE(analyzeLinkArgs({"--relocatable", "a.o"}).Relocatable);
  EXPECT_TRUE(analyzeLinkArgs({"-static", "a.o"}).Static);
  EXPECT_TRUE(analyzeLinkArgs({"-static-pie", "a.o"}).Static);
  EXPECT_TRUE(analyzeLinkArgs({"-shared", "a.o"}).Shared);
  EXPECT_TRUE(analyzeLinkArgs({"-s", "a.o"}).StripAll);
  EXPECT_TRUE(analyzeLinkArgs({"--strip-all", "a.o"}).StripAll);
  EXPECT_TRUE(analyzeLinkArgs({"-S", "a.o"}).StripDebug);
  EXPECT_TRUE(analyzeLinkArgs({"--strip-debug", "a.o"}).StripDebug);
  EXPECT_TRUE(analyzeLinkArgs({"--version"}).InfoOnly);
  EXPECT_TRUE(analyzeLinkArgs({"-v"}).InfoOnly);
  EXPECT_TRUE(analyzeLinkArgs({"-m", "elf_x86_64"}).InfoOnly); // nothing to link
  EXPECT_TRUE(analyzeLinkArgs({"a.o", "--thinlto-cache-dir=/c"}).HasCacheDir);
  EXPECT_TRUE(analyzeLinkArgs({"a.o", "-plugin-opt=cache-dir=/c"}).HasCacheDir);
  EXPECT_FALSE(analyzeLinkArgs({"a.o", "-plugin-opt=O2"}).HasCacheDir);
}

TEST(LinkArgs, StripOptionsAreHeldBack) {
  LinkArgs L = analyzeLinkArgs({"-s", "a.o", "--strip-debug", "-o", "x", "-lc"});
  std::vector<std::string> Expected{"a.o", "-o", "x", "-lc"};
  EXPECT_EQ(argsWithoutStrip(L), Expected);
  // A value that looks like a strip option stays.
  L = analyzeLinkArgs({"a.o", "-soname", "-s", "-s"});
  std::vector<std::string> KeepValue{"a.o", "-soname", "-s"};
  EXPECT_TRUE(L.StripAll);
  EXPECT_EQ(argsWithoutStrip(L), KeepValue);
}

} // namespace
