/**
 * A process that holds a session's lease, for sessionLease.test.ts (run with tsx):
 *
 *   leaseHolder.ts FILE hold     takes the lease, prints {"held":PID}, waits until killed
 *   leaseHolder.ts FILE die      takes the lease, prints {"held":PID}, then SIGKILLs itself (no release)
 */
import { holdSessionLease } from '../../../src/adapters/store/sessionLease.js';

const [file, mode] = process.argv.slice(2) as [string, string];
await holdSessionLease(file, { command: 'holder' });
process.stdout.write(`${JSON.stringify({ held: process.pid })}\n`);
if (mode === 'die') process.kill(process.pid, 'SIGKILL');
else setInterval(() => {}, 60_000);
