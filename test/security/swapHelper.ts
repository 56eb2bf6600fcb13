/**
 * The attacker for the sandbox race tests: a small C program, compiled here with gcc, that swaps
 * two paths with renameat2(RENAME_EXCHANGE) in a tight loop until it is killed (or its parent
 * dies). Each exchange is atomic, so at every instant one of the two names is the real directory
 * and the other the symlink leading out of the workspace.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const SOURCE = String.raw`
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
int main(int argc, char **argv) {
  if (argc != 3) return 2;
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
  for (unsigned long n = 0;; n++) {
    if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) != 0) {
      perror("renameat2");
      return 1;
    }
    if (n == 0) {
      fputs("ready\n", stdout);
      fflush(stdout);
    }
    sched_yield(); /* let the machine breathe; still thousands of swaps a second */
  }
}
`;

/** Compiles the swapper into `dir` (gcc must be installed; CI installs it). */
export async function buildSwapper(dir: string): Promise<string> {
  const src = join(dir, 'swap.c');
  const bin = join(dir, 'swap');
  await writeFile(src, SOURCE);
  await promisify(execFile)('gcc', ['-O2', '-o', bin, src]);
  return bin;
}

/** A running swapper; `stop` kills exactly this process and waits for it to be gone. */
export interface Swapper {
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts swapping `a` and `b`; resolves once the first exchange has happened. */
export function startSwapper(bin: string, a: string, b: string): Promise<Swapper> {
  const child = spawn(bin, [a, b], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) resolve({ child, stop });
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`swapper exited early (${code ?? signal}): ${stderr}`)));
  });
}
