//===- causal/hook_declarations.h - Declarations the hook table needs ----===//
//
// The functions of causal/hooks.def that the C library's headers do not
// always declare: _FORTIFY_SOURCE's checked reads and opens, declared by
// glibc only in fortified builds. Include it before expanding the table with its types.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_HOOK_DECLARATIONS_H
#define CAUSAL_HOOK_DECLARATIONS_H

#include <sys/socket.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif
ssize_t __read_chk(int fd, void *buf, size_t n, size_t size);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t offset, size_t size);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t offset, size_t size);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t size, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t size, int flags, struct sockaddr *from,
                       socklen_t *from_size);
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dir, const char *path, int flags);
int __openat64_2(int dir, const char *path, int flags);
#ifdef __cplusplus
}
#endif

#endif // CAUSAL_HOOK_DECLARATIONS_H
