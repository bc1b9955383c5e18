/**
 * A guest on a host whose CPU has AVX-512 or AMX. User-Mode Linux 6.1 (Debian bookworm's) restores a
 * guest process's FPU state with `PTRACE_SETREGSET(NT_X86_XSTATE)` from an 832-byte buffer (x87, SSE
 * and AVX); a host kernel accepts that register set only whole, in its own size, which such CPUs make
 * larger: the call fails with `EFAULT` and the guest panics before its init runs ("ptrace set fp
 * regs failed, errno = 14"). A small library preloaded into the kernel's process passes such a buffer
 * on in the host's size, with the components UML does not save left in their initial state; and the
 * guest's programs are told not to use them (glibc's AVX-512 string functions, OpenSSL's AVX-512 and
 * VAES code), since UML would not keep them across a switch. On other hosts the library changes
 * nothing. It is compiled with the host's `gcc` once per guest image.
 */
import { existsSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../command.ts';

/** Variables set for every program of the guest (passed on the kernel command line to init). */
export const guestCpuEnvironment: Readonly<Record<string, string>> = {
  GLIBC_TUNABLES: 'glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD',
  // Leaf 7 of CPUID as OpenSSL sees it: none of AVX2, AVX-512, VAES, SHA extensions.
  OPENSSL_ia32cap: ':0',
};

const source = `#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>

#define XSAVE_HEADER_OFFSET 512
#define AVX_END 832

typedef long (*ptrace_fn)(enum __ptrace_request, ...);

long ptrace(enum __ptrace_request request, ...) {
  static ptrace_fn real;
  static size_t host_size;
  va_list args;
  va_start(args, request);
  pid_t pid = va_arg(args, pid_t);
  void *addr = va_arg(args, void *);
  void *data = va_arg(args, void *);
  va_end(args);
  if (real == NULL) real = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
  if (request != PTRACE_SETREGSET || (uintptr_t)addr != NT_X86_XSTATE) return real(request, pid, addr, data);
  struct iovec *given = data;
  if (host_size == 0) {
    static char probe[1 << 16];
    struct iovec all = {probe, sizeof probe};
    if (real(PTRACE_GETREGSET, pid, addr, &all) == 0) host_size = all.iov_len;
  }
  if (host_size <= given->iov_len || given->iov_len < XSAVE_HEADER_OFFSET + 16) return real(request, pid, addr, data);
  char *whole = calloc(1, host_size);
  if (whole == NULL) return real(request, pid, addr, data);
  memcpy(whole, given->iov_base, given->iov_len);
  uint64_t known = given->iov_len >= AVX_END ? 0x7 : 0x3;
  uint64_t *xstate_bv = (uint64_t *)(whole + XSAVE_HEADER_OFFSET);
  *xstate_bv &= known;
  uint64_t *xcomp_bv = (uint64_t *)(whole + XSAVE_HEADER_OFFSET + 8);
  *xcomp_bv = 0;
  struct iovec resized = {whole, host_size};
  long result = real(request, pid, addr, &resized);
  free(whole);
  return result;
}
`;

/** The preloaded library for kernels of `imageDir`, compiled there if it is not yet. */
export async function xstateShim(imageDir: string): Promise<string> {
  const library = join(imageDir, 'uml-xstate.so');
  if (existsSync(library)) return library;
  const partial = join(imageDir, `uml-xstate.${process.pid}`);
  await writeFile(`${partial}.c`, source);
  await runCommand('gcc', ['-shared', '-fPIC', '-O2', '-o', `${partial}.so`, `${partial}.c`, '-ldl'], {
    missingHint: 'the test guest compiles a small library for its kernel with gcc',
  });
  await rename(`${partial}.so`, library);
  return library;
}
