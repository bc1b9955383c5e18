/**
 * A guest on a host whose CPU has AVX-512 or AMX. User-Mode Linux 6.1 (Debian bookworm's) saves and
 * restores a guest thread's FPU state with `PTRACE_GETREGSET`/`PTRACE_SETREGSET(NT_X86_XSTATE)` in an
 * 832-byte buffer (x87, SSE and AVX). A host kernel hands out a shorter copy but takes the register set
 * back only whole, in its own size, which such CPUs make larger: the restore fails with `EFAULT` and
 * the guest panics before its init runs ("ptrace set fp regs failed, errno = 14"). A small library
 * preloaded into the kernel's process keeps the whole state each read returned, by UML's buffer (one
 * per guest thread), and hands the restore the whole of it with UML's part put back in: so the guest's
 * programs keep their AVX-512 registers too (simdutf in Node.js uses them). On other hosts the calls
 * pass through unchanged. It is compiled with the host's `gcc`, once per guest image and source.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../command.ts';

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

#define XSAVE_HEADER 512
#define SLOTS 65536

typedef long (*ptrace_fn)(enum __ptrace_request, ...);

/* The whole state last read into each of UML's buffers (one per guest thread), by buffer address. */
static struct { void *key; char *state; } saved[SLOTS];
static size_t host_size;
static ptrace_fn real;

static char **slot(void *key, int create) {
  size_t i = ((uintptr_t)key >> 4) % SLOTS;
  for (size_t n = 0; n < SLOTS; n++, i = (i + 1) % SLOTS) {
    if (saved[i].key == key) return &saved[i].state;
    if (saved[i].key == NULL) {
      if (!create) return NULL;
      saved[i].key = key;
      return &saved[i].state;
    }
  }
  return NULL;
}

long ptrace(enum __ptrace_request request, ...) {
  va_list args;
  va_start(args, request);
  pid_t pid = va_arg(args, pid_t);
  void *addr = va_arg(args, void *);
  void *data = va_arg(args, void *);
  va_end(args);
  if (real == NULL) real = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
  int xstate = (request == PTRACE_GETREGSET || request == PTRACE_SETREGSET) && (uintptr_t)addr == NT_X86_XSTATE;
  if (!xstate) return real(request, pid, addr, data);
  struct iovec *given = data;
  if (host_size == 0) {
    static char probe[1 << 16];
    struct iovec all = {probe, sizeof probe};
    if (real(PTRACE_GETREGSET, pid, addr, &all) == 0) host_size = all.iov_len;
  }
  if (host_size <= given->iov_len || given->iov_len < XSAVE_HEADER + 16) return real(request, pid, addr, data);
  size_t known_bytes = given->iov_len;
  uint64_t known = known_bytes >= 832 ? 0x7 : 0x3;
  if (request == PTRACE_GETREGSET) {
    char **state = slot(given->iov_base, 1);
    if (state == NULL) return real(request, pid, addr, data);
    if (*state == NULL && (*state = malloc(host_size)) == NULL) return real(request, pid, addr, data);
    struct iovec whole = {*state, host_size};
    long result = real(request, pid, addr, &whole);
    if (result == 0) memcpy(given->iov_base, *state, known_bytes);
    return result;
  }
  char *whole = calloc(1, host_size);
  if (whole == NULL) return real(request, pid, addr, data);
  char **state = slot(given->iov_base, 0);
  uint64_t kept = 0;
  if (state != NULL && *state != NULL) {
    memcpy(whole, *state, host_size);
    kept = *(uint64_t *)(*state + XSAVE_HEADER) & ~known;
  }
  memcpy(whole, given->iov_base, known_bytes);
  *(uint64_t *)(whole + XSAVE_HEADER) = (*(uint64_t *)(whole + XSAVE_HEADER) & known) | kept;
  *(uint64_t *)(whole + XSAVE_HEADER + 8) = 0;
  struct iovec resized = {whole, host_size};
  long result = real(request, pid, addr, &resized);
  free(whole);
  return result;
}
`;

/** The library to preload into kernels of `imageDir`, compiled there if it is not yet. */
export async function xstateShim(imageDir: string): Promise<string> {
  const version = createHash('sha256').update(source).digest('hex').slice(0, 12);
  const library = join(imageDir, `uml-xstate-${version}.so`);
  if (existsSync(library)) return library;
  const partial = join(imageDir, `uml-xstate.partial-${process.pid}`);
  await writeFile(`${partial}.c`, source);
  await runCommand('gcc', ['-shared', '-fPIC', '-O2', '-o', `${partial}.so`, `${partial}.c`, '-ldl'], {
    missingHint: 'the test guest compiles a small library for its kernel with gcc',
  });
  await rename(`${partial}.so`, library);
  return library;
}
