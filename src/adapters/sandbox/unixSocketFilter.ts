/**
 * A seccomp filter (classic BPF, as bubblewrap's `--seccomp FD` reads it) that makes creating a
 * Unix socket fail with `EACCES`: `socket(AF_UNIX, …)`. Without one, a command cannot connect to
 * a path socket of the host (docker, an agent, a database), whatever directory it lies in. Pure.
 *
 * `socketpair(AF_UNIX, …)` still works (a connected pair, reaching nothing outside: pipes, node's
 * and Python's child IPC use it). Only the kernel's own architecture and its compatibility ones
 * are named: x86_64 (with x32 and i386, where `socketcall(SYS_SOCKET)` is refused whole, its
 * family being out of the filter's sight) and aarch64 (with 32-bit ARM). Any other architecture
 * gets no filter ({@link unixSocketFilter} returns undefined) and docs/sandbox.md says so.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LD_W_ABS = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const RET_K = 0x06; // BPF_RET | BPF_K
const RET_ALLOW = 0x7fff0000;
const RET_EACCES = 0x00050000 | 13; // SECCOMP_RET_ERRNO | EACCES
const OFF_NR = 0;
const OFF_ARCH = 4;
const OFF_ARG0_LOW = 16; // args[0], low 32 bits (little-endian: every architecture below)
const AF_UNIX = 1;

/** One architecture's calls that make a socket. `family`: refused when args[0] is AF_UNIX; `always`: refused whole. */
interface ArchCalls {
  readonly arch: number;
  readonly family: readonly number[];
  readonly always?: { readonly nr: number; readonly arg0: number };
}

const X86_64: ArchCalls = { arch: 0xc000003e, family: [41, 0x40000000 | 41] }; // socket, x32 socket
const I386: ArchCalls = { arch: 0x40000003, family: [359], always: { nr: 102, arg0: 1 } }; // socket; socketcall(SYS_SOCKET)
const AARCH64: ArchCalls = { arch: 0xc00000b7, family: [198] };
const ARM: ArchCalls = { arch: 0x40000028, family: [281] };

const BY_MACHINE: Readonly<Record<string, readonly ArchCalls[]>> = {
  x64: [X86_64, I386],
  arm64: [AARCH64, ARM],
};

type Insn = [code: number, jt: number, jf: number, k: number];

/**
 * The filter for `machine` (`process.arch`: `x64`, `arm64`) as the bytes of a `struct
 * sock_filter[]`, or undefined where no filter is known.
 */
export function unixSocketFilter(machine: string = process.arch): Buffer | undefined {
  const arches = BY_MACHINE[machine];
  if (!arches) return undefined;
  // Built back to front so that every jump is a forward offset to a known instruction.
  const tail: Insn[] = [
    [RET_K, 0, 0, RET_ALLOW], // last - 1
    [RET_K, 0, 0, RET_EACCES], // last
  ];
  const prog: Insn[] = [];
  // Each block: ld arch; jeq arch ? next : (next block); ld nr; per call …; falls to allow.
  const blocks: Insn[][] = arches.map((a) => {
    const b: Insn[] = [];
    b.push([LD_W_ABS, 0, 0, OFF_NR]);
    for (const nr of a.family) {
      // if nr == this: load arg0, AF_UNIX ? deny : allow
      b.push([JEQ_K, 0, 2, nr]);
      b.push([LD_W_ABS, 0, 0, OFF_ARG0_LOW]);
      b.push([JEQ_K, 0xff, 0xfe, AF_UNIX]); // placeholders: deny / allow
    }
    if (a.always) {
      b.push([JEQ_K, 0, 2, a.always.nr]);
      b.push([LD_W_ABS, 0, 0, OFF_ARG0_LOW]);
      b.push([JEQ_K, 0xff, 0xfe, a.always.arg0]);
    }
    b.push([0x05, 0, 0, 0xfffd]); // BPF_JMP | BPF_JA to allow (placeholder)
    return b;
  });
  prog.push([LD_W_ABS, 0, 0, OFF_ARCH]);
  // Arch dispatch: jeq arch_i ? block_i : next test; no match: allow.
  const dispatchLen = arches.length + 1; // the tests and a final jump to allow
  let blockStart = 1 + dispatchLen;
  const starts: number[] = [];
  for (const b of blocks) {
    starts.push(blockStart);
    blockStart += b.length;
  }
  const allowAt = blockStart;
  const denyAt = allowAt + 1;
  arches.forEach((a, i) => {
    const here = 1 + i;
    prog.push([JEQ_K, starts[i]! - here - 1, 0, a.arch]);
  });
  prog.push([0x05, 0, 0, allowAt - (1 + arches.length) - 1]);
  blocks.forEach((b, i) => {
    b.forEach((insn, j) => {
      const here = starts[i]! + j;
      const [code, jt, jf, k] = insn;
      if (code === 0x05 && k === 0xfffd) prog.push([code, 0, 0, allowAt - here - 1]);
      else if (jt === 0xff && jf === 0xfe) prog.push([code, denyAt - here - 1, allowAt - here - 1, k]);
      else prog.push(insn);
    });
  });
  prog.push(...tail);
  for (const [code, jt, jf] of prog) {
    if (jt > 255 || jf > 255 || jt < 0 || jf < 0) throw new Error(`unixSocketFilter: a jump out of range (${code})`);
  }
  const buf = Buffer.alloc(prog.length * 8);
  prog.forEach(([code, jt, jf, k], i) => {
    buf.writeUInt16LE(code, i * 8);
    buf.writeUInt8(jt, i * 8 + 2);
    buf.writeUInt8(jf, i * 8 + 3);
    buf.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return buf;
}

let filterFile: string | undefined;
/**
 * {@link unixSocketFilter} for this machine, written once per process to a file of its own
 * (removed at exit), for `/bin/sh -c 'exec "$@" 9<"$0"' <file> bwrap … --seccomp 9 …`; undefined
 * where there is no filter for this architecture.
 */
export function unixSocketFilterFile(): string | undefined {
  if (filterFile !== undefined && existsSync(filterFile)) return filterFile;
  const bytes = unixSocketFilter();
  if (bytes === undefined) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'dsh-seccomp-'));
  const file = join(dir, 'unix-sockets.bpf');
  writeFileSync(file, bytes, { mode: 0o444 });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return (filterFile = file);
}
