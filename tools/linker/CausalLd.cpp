//===- CausalLd.cpp - causal-ld: link, then embed the exact line table ------===//
//
// Installed as <prefix>/libexec/causal/ld and .../ld.lld; clang runs it
// through --ld-path. It runs the real linker (chosen by its own file name)
// twice:
//
//   link 1: the user's link, plus the runtime (-lcausal_rt before every other
//           library, so it precedes libc in DT_NEEDED);
//   table:  the exact address -> file:line table from the output's DWARF
//           line tables; its size S depends only on row/line/file counts;
//   link 2: the same link plus an object holding an S-byte causal_lines
//           placeholder section;
//   patch:  the table rebuilt from link 2's own DWARF (sections may have
//           moved) is written over the placeholder at its file offset.
//
// -s/-S are held back from the links and applied after patching; -r and
// links without line tables are one plain link. See docs/precision.md.
//
// Environment: CAUSAL_REAL_LD overrides the real linker; CAUSAL_LD_VERBOSE=1
// prints the commands run.
//
//===----------------------------------------------------------------------===//
#include "InstallLayout.h"
#include "LineTable.h"
#include "LinkArgs.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/StringSaver.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#ifndef CAUSAL_CLANG_PATH
#error "CAUSAL_CLANG_PATH must name the clang that causal-clang wraps"
#endif

extern char **environ;

using namespace causal;
using namespace llvm;

namespace {

const char *const RealLinkerEnv = "CAUSAL_REAL_LD";
const char *const VerboseEnv = "CAUSAL_LD_VERBOSE";
// The placeholder may have to grow if link 2's table is larger than link 1's
// (never seen, but cheap to handle): this many link-2 attempts at most.
const int MaxPlaceholderAttempts = 3;

bool Verbose = false;
const auto StartTime = std::chrono::steady_clock::now();

// With CAUSAL_LD_VERBOSE: what was done, and when (ms since start).
void note(const Twine &What) {
  if (!Verbose)
    return;
  auto Ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  StartTime)
                .count();
  std::fprintf(stderr, "causal-ld: [%lld ms] %s\n", (long long)Ms, What.str().c_str());
}

void error(const Twine &Message) {
  std::fprintf(stderr, "causal-ld: error: %s\n", Message.str().c_str());
}
void warning(const Twine &Message) {
  std::fprintf(stderr, "causal-ld: warning: %s\n", Message.str().c_str());
}

// ---- temporary directory, removed on every exit path ----------------------

std::string TempDir;

void removeTempDir() {
  if (TempDir.empty())
    return;
  sys::fs::remove_directories(TempDir, /*IgnoreErrors=*/true);
  TempDir.clear();
}

void onFatalSignal(int Signal) {
  removeTempDir();
  std::signal(Signal, SIG_DFL);
  std::raise(Signal);
}

struct TempDirGuard {
  ~TempDirGuard() { removeTempDir(); }
};

bool makeTempDir() {
  const char *Base = std::getenv("TMPDIR");
  std::string Template = std::string(Base && *Base ? Base : "/tmp") + "/causal-ld.XXXXXX";
  std::vector<char> Buf(Template.begin(), Template.end());
  Buf.push_back('\0');
  if (!mkdtemp(Buf.data())) {
    error("cannot create a temporary directory " + Template + ": " + std::strerror(errno));
    return false;
  }
  TempDir = Buf.data();
  for (int Signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT})
    std::signal(Signal, onFatalSignal);
  return true;
}

// ---- processes --------------------------------------------------------------

std::string joinCommand(const std::string &Program, const std::vector<std::string> &Args) {
  std::string Out = Program;
  for (const std::string &A : Args)
    Out += " " + A;
  return Out;
}

// Runs Program with Args (argv[0] = Program). With OutputLog set, stdout and
// stderr go to that file. Returns the exit status, 128+signal if killed, or
// -1 if the program could not be started.
int runProgram(const std::string &Program, const std::vector<std::string> &Args,
               const std::string &OutputLog = std::string()) {
  note("running " + joinCommand(Program, Args));
  std::vector<char *> Argv;
  Argv.push_back(const_cast<char *>(Program.c_str()));
  for (const std::string &A : Args)
    Argv.push_back(const_cast<char *>(A.c_str()));
  Argv.push_back(nullptr);

  posix_spawn_file_actions_t Actions;
  posix_spawn_file_actions_init(&Actions);
  if (!OutputLog.empty()) {
    posix_spawn_file_actions_addopen(&Actions, 1, OutputLog.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_adddup2(&Actions, 1, 2);
  }
  pid_t Pid;
  int Err = posix_spawn(&Pid, Program.c_str(), &Actions, nullptr, Argv.data(), environ);
  posix_spawn_file_actions_destroy(&Actions);
  if (Err) {
    error("cannot run " + Program + ": " + std::strerror(Err));
    return -1;
  }
  int Status = 0;
  while (waitpid(Pid, &Status, 0) < 0) {
    if (errno != EINTR) {
      error("waiting for " + Program + ": " + std::strerror(errno));
      return -1;
    }
  }
  if (WIFEXITED(Status))
    return WEXITSTATUS(Status);
  if (WIFSIGNALED(Status)) {
    error(Program + " was killed by signal " + Twine(WTERMSIG(Status)));
    return 128 + WTERMSIG(Status);
  }
  return 1;
}

void printFile(const std::string &Path) {
  auto Buffer = MemoryBuffer::getFile(Path);
  if (Buffer)
    std::fwrite((*Buffer)->getBufferStart(), 1, (*Buffer)->getBufferSize(), stderr);
}

// ---- finding programs -------------------------------------------------------

std::string realPath(const std::string &Path) {
  char Buf[PATH_MAX];
  return realpath(Path.c_str(), Buf) ? std::string(Buf) : std::string();
}

using causal::isExecutableFile;

// PATH lookup that skips our own directory and anything resolving to this
// very executable (so `ld` does not find itself).
std::string findOnPath(const std::string &Name, const std::string &SelfDir,
                       const std::string &SelfExe) {
  const char *Path = std::getenv("PATH");
  if (!Path)
    return {};
  StringRef Rest(Path);
  while (!Rest.empty()) {
    auto Split = Rest.split(':');
    Rest = Split.second;
    std::string Dir = Split.first.empty() ? "." : Split.first.str();
    std::string Candidate = Dir + "/" + Name;
    if (!isExecutableFile(Candidate))
      continue;
    if (realPath(Dir) == SelfDir || realPath(Candidate) == SelfExe)
      continue;
    return Candidate;
  }
  return {};
}

std::string parentDir(const std::string &Path) { return sys::path::parent_path(Path).str(); }

std::string toolNextToClang(const char *Name) {
  std::string Candidate = parentDir(CAUSAL_CLANG_PATH) + "/" + Name;
  return isExecutableFile(Candidate) ? Candidate : std::string();
}

// ---- the placeholder ---------------------------------------------------------

bool makePlaceholderObject(uint64_t Size, const std::string &Object) {
  std::string Source = TempDir + "/causal_lines.s";
  FILE *F = std::fopen(Source.c_str(), "w");
  if (!F) {
    error("cannot write " + Source + ": " + std::strerror(errno));
    return false;
  }
  // "R" (SHF_GNU_RETAIN): --gc-sections must not drop the table even in an
  // image whose code does not reference __start_causal_lines.
  std::fprintf(F,
               "\t.section " CAUSAL_LINETAB_SECTION ",\"aR\",@progbits\n"
               "\t.p2align 3\n"
               "\t.zero %llu\n"
               "\t.section .note.GNU-stack,\"\",@progbits\n",
               (unsigned long long)Size);
  std::fclose(F);
  std::string Log = TempDir + "/as.log";
  int Status = runProgram(CAUSAL_CLANG_PATH, {"-c", "-x", "assembler", "-o", Object, Source}, Log);
  if (Status != 0) {
    if (Status > 0) {
      printFile(Log);
      error("cannot assemble the line-table placeholder with " CAUSAL_CLANG_PATH);
    }
    return false;
  }
  return true;
}

bool patchFile(const std::string &Path, uint64_t Offset, const std::vector<uint8_t> &Bytes) {
  int Fd = ::open(Path.c_str(), O_WRONLY);
  if (Fd < 0) {
    error("cannot open " + Path + " to write the line table: " + std::strerror(errno));
    return false;
  }
  size_t Done = 0;
  while (Done < Bytes.size()) {
    ssize_t N = pwrite(Fd, Bytes.data() + Done, Bytes.size() - Done, (off_t)(Offset + Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      error("cannot write the line table into " + Path + ": " + std::strerror(errno));
      ::close(Fd);
      return false;
    }
    Done += (size_t)N;
  }
  if (::close(Fd) != 0) {
    error("cannot write the line table into " + Path + ": " + std::strerror(errno));
    return false;
  }
  return true;
}

// Strips after the table is in place (the DWARF was needed until then).
int stripOutput(const linker::LinkArgs &L) {
  if (!L.StripAll && !L.StripDebug)
    return 0;
  std::string Strip = toolNextToClang("llvm-strip");
  if (Strip.empty())
    Strip = findOnPath("strip", "", "");
  if (Strip.empty()) {
    error("-s/-S given but neither llvm-strip next to " CAUSAL_CLANG_PATH
          " nor strip on PATH was found");
    return 1;
  }
  int Status = runProgram(Strip, {L.StripAll ? "--strip-all" : "--strip-debug", L.Output});
  if (Status != 0) {
    if (Status > 0)
      error("stripping " + L.Output + " with " + Strip + " failed");
    return Status > 0 ? Status : 1;
  }
  return 0;
}

// Writes Args to a response file when the command line gets long (clang
// switches to response files itself around this size).
std::vector<std::string> maybeResponseFile(const std::vector<std::string> &Args,
                                           const std::string &Name) {
  size_t Length = 0;
  for (const std::string &A : Args)
    Length += A.size() + 1;
  if (Length < 64 * 1024 || TempDir.empty())
    return Args;
  std::string Path = TempDir + "/" + Name;
  FILE *F = std::fopen(Path.c_str(), "w");
  if (!F)
    return Args;
  for (const std::string &A : Args) {
    std::fputc('"', F);
    for (char C : A) {
      if (C == '"' || C == '\\')
        std::fputc('\\', F);
      std::fputc(C, F);
    }
    std::fputs("\"\n", F);
  }
  std::fclose(F);
  return {"@" + Path};
}

/// Fails the link: says why, removes the half-made output. Returns 1.
int failLink(const linker::LinkArgs &L, const Twine &Why) {
  error(Why);
  sys::fs::remove(L.Output);
  return 1;
}

/// The real linker this invocation stands for (flavor: the name it was
/// called by), or "" after saying why there is none.
std::string findRealLinker(const std::string &Flavor, bool IsLld, const std::string &SelfDir,
                           const std::string &SelfExe) {
  std::string RealLd;
  if (const char *Override = std::getenv(RealLinkerEnv); Override && *Override) {
    RealLd =
        std::strchr(Override, '/') ? std::string(Override) : findOnPath(Override, SelfDir, SelfExe);
    if (RealLd.empty() || !isExecutableFile(RealLd)) {
      error(std::string(RealLinkerEnv) + "=" + Override + ": no such executable");
      return {};
    }
  } else if (IsLld) {
    RealLd = toolNextToClang("ld.lld");
    if (RealLd.empty())
      RealLd = findOnPath("ld.lld", SelfDir, SelfExe);
    if (RealLd.empty()) {
      error("ld.lld not found next to " CAUSAL_CLANG_PATH " nor on PATH");
      return {};
    }
  } else {
    // ld, or ld.bfd / ld.gold if installed under those names.
    std::string Name = (Flavor == "ld.bfd" || Flavor == "ld.gold") ? Flavor : "ld";
    RealLd = findOnPath(Name, SelfDir, SelfExe);
    if (RealLd.empty()) {
      error("no linker '" + Name + "' on PATH (other than causal-ld itself)");
      return {};
    }
  }
  if (realPath(RealLd) == SelfExe) {
    error("the real linker " + RealLd + " is causal-ld itself");
    return {};
  }
  return RealLd;
}

/// The command line with response files expanded (GNU quoting, as clang
/// writes them), analyzed; false after saying why not.
bool readLinkArgs(int argc, char **argv, linker::LinkArgs &L) {
  SmallVector<const char *, 64> ArgPtrs(argv + 1, argv + argc);
  BumpPtrAllocator Alloc;
  StringSaver Saver(Alloc);
  if (!cl::ExpandResponseFiles(Saver, cl::TokenizeGNUCommandLine, ArgPtrs)) {
    error("cannot read a response file");
    return false;
  }
  L = linker::analyzeLinkArgs(std::vector<std::string>(ArgPtrs.begin(), ArgPtrs.end()));
  return true;
}

/// The arguments of both links: the user's without -s/-S, plus the runtime,
/// plus a ThinLTO cache shared by both links so link 2 reuses link 1's
/// codegen. False after saying why not.
bool linkArguments(const linker::LinkArgs &L, bool IsLld, const std::string &RealLd,
                   std::vector<std::string> &LinkArgs) {
  std::string Prefix = layout::prefixOfThisExecutable();
  std::string RuntimeDir = Prefix + "/" + layout::LibDir;
  std::string RuntimeLib = RuntimeDir + "/lib" + layout::RuntimeLibName + ".so";
  std::vector<std::string> UserArgs = linker::argsWithoutStrip(L);
  if (L.Static) {
    warning("static link: the shared runtime lib" + Twine(layout::RuntimeLibName) +
            ".so cannot be linked in; the line table is embedded but nothing will profile "
            "this program");
    LinkArgs = UserArgs;
  } else {
    if (!sys::fs::exists(RuntimeLib)) {
      error("runtime library " + RuntimeLib + " not found (causal installation incomplete)");
      return false;
    }
    // First, so libcausal_rt.so comes before every other library (libc
    // included) in DT_NEEDED and in the dynamic linker's search order.
    LinkArgs = {"--push-state", "--no-as-needed", "-Bdynamic",
                std::string("-l") + layout::RuntimeLibName, "--pop-state"};
    LinkArgs.insert(LinkArgs.end(), UserArgs.begin(), UserArgs.end());
    // Search path and run path last: they must not change which of the
    // user's libraries are found.
    LinkArgs.insert(LinkArgs.end(), {"-L" + RuntimeDir, "-rpath", RuntimeDir});
  }
  if (!L.HasCacheDir) {
    std::string CacheDir = TempDir + "/thinlto-cache";
    if (IsLld || StringRef(RealLd).ends_with("lld"))
      LinkArgs.push_back("--thinlto-cache-dir=" + CacheDir);
    else if (L.UsesPlugin)
      LinkArgs.push_back("-plugin-opt=cache-dir=" + CacheDir);
  }
  return true;
}

/// The requests of the image's request section (causal/abi.h,
/// CAUSAL_PROGRESS_REQUESTS_SECTION, CAUSAL_PATH_REQUESTS_SECTION) that no
/// module matched, in first-seen order. The section holds the records
/// "M\tREQUEST\n" of every module: REQUEST matched in some module if any M is
/// 1.
std::vector<std::string> unmatchedRequests(const linetable::ElfImage &Image, StringRef Section) {
  const linetable::Section *Requests = Image.findSection(Section);
  if (!Requests)
    return {};
  Expected<ArrayRef<uint8_t>> Bytes = Image.contents(*Requests);
  if (!Bytes) {
    consumeError(Bytes.takeError());
    return {};
  }
  std::vector<std::pair<std::string, bool>> Seen; // in first-seen order
  StringRef Rest(reinterpret_cast<const char *>(Bytes->data()), Bytes->size());
  while (!Rest.empty()) {
    auto [Record, Tail] = Rest.split('\n');
    Rest = Tail;
    if (Record.size() < 3 || Record[1] != '\t')
      continue; // padding or damage: nothing to say about it
    std::string Request = Record.drop_front(2).str();
    auto It = llvm::find_if(Seen, [&](const auto &S) { return S.first == Request; });
    if (It == Seen.end())
      Seen.emplace_back(Request, Record[0] == '1');
    else
      It->second |= Record[0] == '1';
  }
  std::vector<std::string> Unmatched;
  for (const auto &[Request, Matched] : Seen)
    if (!Matched)
      Unmatched.push_back(Request);
  return Unmatched;
}

/// Warns when link 1's image has no instrumented code (it would run and
/// profile nothing, silently), names the -fcausal-progress-fn options and the
/// -fcausal-paths names that matched no function in any of its modules.
void checkInstrumentation(const linker::LinkArgs &L, const linetable::ElfImage &Image) {
  // Every instrumented module's constructor calls the runtime's registration,
  // so an image with instrumented code imports it.
  if (!L.Static && !Image.dynamicStringsContain(CAUSAL_REGISTER_MODULE_FN))
    warning(L.Output + ": no object of this link was compiled with -fcausal-profile: it runs, "
                       "but none of its code is profiled (add -fcausal-profile to the compile "
                       "flags too, not only to the link)");
  for (const std::string &Option : unmatchedRequests(Image, CAUSAL_PROGRESS_REQUESTS_SECTION))
    warning(L.Output + ": " + Option +
            " matched no function defined in this link, so it placed no progress point (C++ "
            "names are qualified: ns::Server::handle)");
  for (const std::string &Name : unmatchedRequests(Image, CAUSAL_PATH_REQUESTS_SECTION))
    warning(L.Output + ": -fcausal-paths: '" + Name +
            "' matched no function defined in this link, so no call paths are collected for it "
            "(a name is a symbol, a qualified C++ name such as ns::Server::handle, with or "
            "without its parameters, or a glob of one)");
}

/// The line table of link 1's DWARF (empty without line info), after the
/// instrumentation checks on the same image.
Expected<linetable::Table> tableOfLink1(const linker::LinkArgs &L) {
  auto Image = linetable::ElfImage::open(L.Output);
  if (!Image)
    return Image.takeError();
  checkInstrumentation(L, **Image);
  if (!(*Image)->hasDebugLine())
    return linetable::Table(); // no line info: no table
  return linetable::buildTableFromDwarf(**Image);
}

/// Link 2, with a placeholder of \p PlaceholderSize bytes, and the table of
/// its layout written over the placeholder. Returns the exit status, or -1
/// with \p PlaceholderSize grown when the table did not fit: link again.
int linkWithPlaceholder(const std::string &RealLd, const std::vector<std::string> &LinkArgs,
                        const linker::LinkArgs &L, uint64_t &PlaceholderSize) {
  std::string Object = TempDir + "/causal_lines.o";
  if (!makePlaceholderObject(PlaceholderSize, Object)) {
    sys::fs::remove(L.Output);
    return 1;
  }
  // Link 2: quiet unless it fails.
  std::vector<std::string> Link2Args = LinkArgs;
  Link2Args.push_back(Object);
  std::string Log = TempDir + "/link2.log";
  int Status = runProgram(RealLd, maybeResponseFile(Link2Args, "link2.rsp"), Log);
  if (Status != 0) {
    printFile(Log);
    failLink(L, "second link (with the line-table placeholder) failed");
    return Status < 0 ? 1 : Status;
  }
  note("link 2 done");
  // The table of the final layout, written over the placeholder.
  auto Image = linetable::ElfImage::open(L.Output);
  if (!Image)
    return failLink(L, toString(Image.takeError()));
  const linetable::Section *S = (*Image)->findSection(CAUSAL_LINETAB_SECTION);
  if (!S || !S->HasFileContents)
    return failLink(L, L.Output + ": the linker dropped the " CAUSAL_LINETAB_SECTION
                                  " placeholder section (linker script without a place for it?)");
  auto Table2 = linetable::buildTableFromDwarf(**Image);
  if (!Table2)
    return failLink(L, toString(Table2.takeError()));
  if (Table2->Rows.empty())
    return failLink(L, L.Output + ": the second link has no line table although the first had one");
  if (Table2->serializedSize() > S->Size) {
    // Layout changed the row count: grow the placeholder and link again.
    PlaceholderSize = Table2->serializedSize();
    return -1;
  }
  auto Bytes = linetable::serialize(*Table2, S->Address, S->Size);
  if (!Bytes)
    return failLink(L, L.Output + ": " + toString(Bytes.takeError()));
  note("table of link 2: " + Twine(Table2->Rows.size()) + " rows");
  uint64_t FileOffset = S->FileOffset;
  Image->reset(); // unmap before writing
  if (!patchFile(L.Output, FileOffset, *Bytes)) {
    sys::fs::remove(L.Output);
    return 1;
  }
  note("table written at file offset " + Twine(FileOffset));
  return stripOutput(L);
}

} // namespace

int main(int argc, char **argv) {
  Verbose = std::getenv(VerboseEnv) && std::strcmp(std::getenv(VerboseEnv), "0") != 0;
  std::string SelfExe = realPath("/proc/self/exe");
  std::string Flavor = sys::path::filename(argv[0]).str();
  bool IsLld = StringRef(Flavor).starts_with("ld.lld");
  std::string RealLd = findRealLinker(Flavor, IsLld, parentDir(SelfExe), SelfExe);
  linker::LinkArgs L;
  if (RealLd.empty() || !readLinkArgs(argc, argv, L))
    return 1;

  // Pass-through: nothing to link, or a relocatable link (the table belongs
  // to the final image).
  if (L.InfoOnly || L.Relocatable) {
    int Status = runProgram(RealLd, L.Args);
    return Status < 0 ? 1 : Status;
  }

  TempDirGuard Cleanup;
  std::vector<std::string> LinkArgs;
  if (!makeTempDir() || !linkArguments(L, IsLld, RealLd, LinkArgs))
    return 1;

  // Link 1: as asked; its diagnostics are the ones the user sees.
  int Status = runProgram(RealLd, maybeResponseFile(LinkArgs, "link1.rsp"));
  if (Status != 0)
    return Status < 0 ? 1 : Status;
  note("link 1 done");

  // The table's size from link 1's DWARF.
  Expected<linetable::Table> Table1 = tableOfLink1(L);
  if (!Table1)
    return failLink(L, toString(Table1.takeError()));
  if (Table1->Rows.empty()) {
    note(L.Output + " has no DWARF line info: no line table");
    return stripOutput(L);
  }
  note("table of link 1: " + Twine(Table1->Rows.size()) + " rows, " +
       Twine(Table1->serializedSize()) + " bytes");

  // Link 2 until the table of its layout fits the placeholder.
  uint64_t PlaceholderSize = Table1->serializedSize();
  for (int Attempt = 0; Attempt < MaxPlaceholderAttempts; ++Attempt)
    if (int Result = linkWithPlaceholder(RealLd, LinkArgs, L, PlaceholderSize); Result >= 0)
      return Result;
  return failLink(L, L.Output + ": the line table did not fit its placeholder after " +
                         Twine(MaxPlaceholderAttempts) + " links");
}
