// The Unix-socket seccomp filter (unixSocketFilter.ts), run by a small classic-BPF interpreter for
// every architecture it names (the real filter runs in the kernel in test/security/denyRead.test.ts
// on this machine's architecture).
import { describe, expect, it } from 'vitest';
import { unixSocketFilter } from '../../../src/adapters/sandbox/unixSocketFilter.js';

const ALLOW = 0x7fff0000;
const EACCES = 0x0005000d;

/** Runs the filter on `seccomp_data` { nr, arch, args[0] }. */
function run(prog: Buffer, nr: number, arch: number, arg0: number): number {
  const data = Buffer.alloc(64);
  data.writeInt32LE(nr | 0, 0);
  data.writeUInt32LE(arch >>> 0, 4);
  data.writeUInt32LE(arg0 >>> 0, 16);
  let a = 0;
  for (let pc = 0, steps = 0; pc * 8 < prog.length && steps < 1000; steps++) {
    const code = prog.readUInt16LE(pc * 8);
    const jt = prog[pc * 8 + 2]!;
    const jf = prog[pc * 8 + 3]!;
    const k = prog.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) a = data.readUInt32LE(k);
    else if (code === 0x15) pc += a === k ? jt : jf;
    else if (code === 0x05) pc += k;
    else if (code === 0x06) return k;
    else throw new Error(`unknown instruction ${code.toString(16)}`);
    pc++;
  }
  throw new Error('ran off the end of the filter');
}

describe('unixSocketFilter', () => {
  it('x64: socket(AF_UNIX) is EACCES on x86_64, x32 and i386 (socketcall SYS_SOCKET whole); everything else passes', () => {
    const f = unixSocketFilter('x64')!;
    const X86_64 = 0xc000003e;
    const I386 = 0x40000003;
    expect(run(f, 41, X86_64, 1)).toBe(EACCES);
    expect(run(f, 41, X86_64, 2)).toBe(ALLOW); // AF_INET
    expect(run(f, 53, X86_64, 1)).toBe(ALLOW); // socketpair
    expect(run(f, 42, X86_64, 1)).toBe(ALLOW); // connect (on a socket it could not make)
    expect(run(f, 0x40000000 | 41, X86_64, 1)).toBe(EACCES); // x32
    expect(run(f, 359, I386, 1)).toBe(EACCES);
    expect(run(f, 359, I386, 2)).toBe(ALLOW);
    expect(run(f, 102, I386, 1)).toBe(EACCES); // socketcall(SYS_SOCKET, …)
    expect(run(f, 102, I386, 8)).toBe(ALLOW); // socketcall(SYS_SOCKETPAIR, …)
    expect(run(f, 41, 0xc00000b7, 1)).toBe(ALLOW); // another architecture's numbers mean nothing here
  });

  it('arm64: socket(AF_UNIX) is EACCES on aarch64 and 32-bit ARM', () => {
    const f = unixSocketFilter('arm64')!;
    expect(run(f, 198, 0xc00000b7, 1)).toBe(EACCES);
    expect(run(f, 198, 0xc00000b7, 10)).toBe(ALLOW);
    expect(run(f, 199, 0xc00000b7, 1)).toBe(ALLOW); // socketpair
    expect(run(f, 281, 0x40000028, 1)).toBe(EACCES);
    expect(run(f, 41, 0xc000003e, 1)).toBe(ALLOW);
  });

  it('no filter for an architecture it does not know', () => {
    expect(unixSocketFilter('riscv64')).toBeUndefined();
  });
});
