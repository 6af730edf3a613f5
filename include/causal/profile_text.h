//===- causal/profile_text.h - Escaping of a profile's text values --------===//
//
// A text field (a progress point's name, the profiler's name) may hold any
// byte sequence a program passes, but a record is one line of tab-separated
// key=value fields. The runtime's writer escapes a text value, the reader
// (tools/profile) reads it back to the same bytes; docs/report.md ("The
// schema") documents the escape:
//
//   \\  a backslash          \t  a tab          \n  a newline
//   \r  a carriage return    \xHH  any other byte below 0x20, 0x7f, and a
//                                  byte that is not part of valid UTF-8
//
// Everything else (spaces, '=', valid UTF-8) is written as it is: a key
// ends at the field's first '=' (Coz's viewer splits the same way), so an
// '=' in a value needs no escape, and Coz's viewer shows an escaped name
// as the C string literal a programmer would write.
//
// Header-only and allocation-free on the writing side (the runtime escapes
// in its fatal-signal writer too).
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PROFILE_TEXT_H
#define CAUSAL_PROFILE_TEXT_H

#include <stddef.h>
#include <stdint.h>

namespace causal::profile_text {

/// Length of the valid UTF-8 sequence starting at text[0] (a byte >= 0x80)
/// within |size| bytes, or 0 if it is not one (RFC 3629: no overlong forms,
/// no surrogates, nothing above U+10FFFF).
inline size_t utf8SequenceLength(const unsigned char *text, size_t size) {
  unsigned char lead = text[0];
  size_t length;
  unsigned char low = 0x80, high = 0xbf; // range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf)
    length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0)
      low = 0xa0;
    else if (lead == 0xed)
      high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0)
      low = 0x90;
    else if (lead == 0xf4)
      high = 0x8f;
  } else
    return 0;
  if (size < length || text[1] < low || text[1] > high)
    return 0;
  for (size_t i = 2; i < length; ++i)
    if (text[i] < 0x80 || text[i] > 0xbf)
      return 0;
  return length;
}

/// Writes |text| (|size| bytes) escaped, through put(const char *, size_t):
/// runs of bytes written as they are, one escape sequence per call
/// otherwise. Allocates nothing.
template <class Put> void escape(const char *text, size_t size, Put &&put) {
  const auto *bytes = reinterpret_cast<const unsigned char *>(text);
  size_t run = 0; // start of the bytes not yet written
  size_t i = 0;
  while (i < size) {
    unsigned char byte = bytes[i];
    if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
      ++i;
      continue;
    }
    if (byte >= 0x80) {
      if (size_t length = utf8SequenceLength(bytes + i, size - i)) {
        i += length;
        continue;
      }
    }
    if (i > run)
      put(text + run, i - run);
    char sequence[4] = {'\\', 0, 0, 0};
    size_t length = 2;
    switch (byte) {
    case '\\':
      sequence[1] = '\\';
      break;
    case '\t':
      sequence[1] = 't';
      break;
    case '\n':
      sequence[1] = 'n';
      break;
    case '\r':
      sequence[1] = 'r';
      break;
    default:
      sequence[1] = 'x';
      sequence[2] = "0123456789abcdef"[byte >> 4];
      sequence[3] = "0123456789abcdef"[byte & 15];
      length = 4;
    }
    put(sequence, length);
    run = ++i;
  }
  if (size > run)
    put(text + run, size - run);
}

/// Reads an escaped value back, through put(char): the inverse of escape().
/// A backslash that starts no escape above is kept as it is (profiles
/// written before the escape existed, Coz's own).
template <class Put> void unescape(const char *text, size_t size, Put &&put) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < size; ++i) {
    char c = text[i];
    if (c != '\\' || i + 1 == size) {
      put(c);
      continue;
    }
    char next = text[i + 1];
    if (next == '\\' || next == 't' || next == 'n' || next == 'r') {
      put(next == '\\' ? '\\' : next == 't' ? '\t' : next == 'n' ? '\n' : '\r');
      ++i;
    } else if (next == 'x' && i + 3 < size && hex(text[i + 2]) >= 0 && hex(text[i + 3]) >= 0) {
      put(char(hex(text[i + 2]) * 16 + hex(text[i + 3])));
      i += 3;
    } else {
      put(c);
    }
  }
}

} // namespace causal::profile_text

#endif // CAUSAL_PROFILE_TEXT_H
