//===- ElfImage.cpp - Open a linked x86-64 ELF image for the line-table tools -===//
#include "LineTable.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>

using namespace llvm;

namespace causal {
namespace linetable {

struct ElfImage::Impl {
  object::OwningBinary<object::ObjectFile> Binary;
};

ElfImage::~ElfImage() = default;

const object::ObjectFile &ElfImage::object() const { return *Storage->Binary.getBinary(); }

static Error imageError(StringRef Path, const Twine &What) {
  return createStringError(inconvertibleErrorCode(), Path + ": " + What);
}

Expected<std::unique_ptr<ElfImage>> ElfImage::open(StringRef Path) {
  sys::fs::file_status Status;
  if (std::error_code EC = sys::fs::status(Path, Status))
    return imageError(Path, "cannot open: " + EC.message());
  if (Status.type() == sys::fs::file_type::directory_file)
    return imageError(Path, "is a directory, not an ELF file");

  ErrorOr<std::unique_ptr<MemoryBuffer>> Buffer =
      MemoryBuffer::getFile(Path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!Buffer)
    return imageError(Path, "cannot read: " + Buffer.getError().message());
  StringRef Bytes = (*Buffer)->getBuffer();
  if (Bytes.size() < 4 || !Bytes.starts_with("\x7f"
                                             "ELF"))
    return imageError(Path, "not an ELF file");
  if (Bytes.size() < 20 || Bytes[4] != ELF::ELFCLASS64 || Bytes[5] != ELF::ELFDATA2LSB)
    return imageError(Path, "not an x86-64 ELF file (not 64-bit little-endian)");

  Expected<std::unique_ptr<object::ObjectFile>> Obj =
      object::ObjectFile::createObjectFile((*Buffer)->getMemBufferRef());
  if (!Obj)
    return imageError(Path, "malformed ELF file: " + toString(Obj.takeError()));
  const auto *Elf = dyn_cast<object::ELF64LEObjectFile>(Obj->get());
  if (!Elf)
    return imageError(Path, "not an x86-64 ELF file");
  if (Elf->getELFFile().getHeader().e_machine != ELF::EM_X86_64)
    return imageError(Path, "is an ELF file for " + Triple::getArchTypeName(Elf->getArch()).str() +
                                ", not for x86-64");

  std::unique_ptr<ElfImage> Image(new ElfImage());
  Image->Path = Path.str();
  Image->Storage = std::make_unique<Impl>();
  for (const object::ELFSectionRef S : Elf->sections()) {
    Expected<StringRef> Name = S.getName();
    if (!Name)
      return imageError(Path, "malformed section table: " + toString(Name.takeError()));
    Section Info;
    Info.Name = Name->str();
    Info.Address = S.getAddress();
    Info.FileOffset = S.getOffset();
    Info.Size = S.getSize();
    uint64_t Flags = S.getFlags();
    Info.Executable = (Flags & ELF::SHF_ALLOC) && (Flags & ELF::SHF_EXECINSTR);
    Info.HasFileContents = S.getType() != ELF::SHT_NOBITS;
    if (Info.HasFileContents && Info.Size &&
        (Info.FileOffset > Bytes.size() || Info.Size > Bytes.size() - Info.FileOffset))
      return imageError(Path, "malformed ELF file: section " + Info.Name +
                                  " extends past the end of the file");
    Image->Sections.push_back(std::move(Info));
  }
  Image->Storage->Binary =
      object::OwningBinary<object::ObjectFile>(std::move(*Obj), std::move(*Buffer));
  return std::move(Image);
}

const Section *ElfImage::findSection(StringRef Name) const {
  for (const Section &S : Sections)
    if (S.Name == Name)
      return &S;
  return nullptr;
}

const Section *ElfImage::executableSectionContaining(uint64_t Lo, uint64_t Hi) const {
  for (const Section &S : Sections)
    if (S.Executable && S.Address <= Lo && Lo < Hi && Hi - S.Address <= S.Size)
      return &S;
  return nullptr;
}

Expected<ArrayRef<uint8_t>> ElfImage::contents(const Section &S) const {
  if (!S.HasFileContents)
    return ArrayRef<uint8_t>();
  StringRef Data = object().getData();
  // Checked against the file size in open().
  return ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(Data.data()) + S.FileOffset, S.Size);
}

bool ElfImage::dynamicStringsContain(StringRef Name) const {
  const Section *DynStr = findSection(".dynstr");
  if (!DynStr)
    return false;
  Expected<ArrayRef<uint8_t>> Bytes = contents(*DynStr);
  if (!Bytes) {
    consumeError(Bytes.takeError());
    return false;
  }
  StringRef Strings(reinterpret_cast<const char *>(Bytes->data()), Bytes->size());
  // Whole strings only: preceded by a NUL (or the start) and followed by one.
  for (size_t At = Strings.find(Name); At != StringRef::npos; At = Strings.find(Name, At + 1))
    if ((At == 0 || Strings[At - 1] == '\0') && At + Name.size() < Strings.size() &&
        Strings[At + Name.size()] == '\0')
      return true;
  return false;
}

std::vector<ElfImage::Function> ElfImage::functions() const {
  std::vector<Function> Result;
  const auto &Elf = cast<object::ELF64LEObjectFile>(object());
  auto Collect = [&](auto Range) {
    for (const object::ELFSymbolRef Sym : Range) {
      if (Sym.getELFType() != ELF::STT_FUNC || Sym.getSize() == 0)
        continue;
      Expected<uint64_t> Addr = Sym.getAddress();
      Expected<StringRef> Name = Sym.getName();
      if (!Addr || !Name) {
        consumeError(Addr.takeError());
        consumeError(Name.takeError());
        continue;
      }
      Result.push_back({*Addr, Sym.getSize(), Name->str()});
    }
  };
  Collect(Elf.symbols());
  if (Result.empty())
    Collect(Elf.getDynamicSymbolIterators());
  std::sort(Result.begin(), Result.end(), [](const Function &A, const Function &B) {
    return A.Address != B.Address ? A.Address < B.Address : A.Size > B.Size;
  });
  // One entry per address (aliases).
  Result.erase(
      std::unique(Result.begin(), Result.end(),
                  [](const Function &A, const Function &B) { return A.Address == B.Address; }),
      Result.end());
  return Result;
}

} // namespace linetable
} // namespace causal
