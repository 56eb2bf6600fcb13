/**
 * Starts a throwaway PostgreSQL (scripts/throwawayPostgres.ts), prints its URL on stdout, and
 * keeps it until SIGINT/SIGTERM (then stops it and removes its directory). For trying `dsh worker`
 * and `dsh submit` by hand: `DSH_DATABASE_URL=$(…)`; the tests start their own. `--durable`: fsync
 * and synchronous_commit on (the benchmark's append latency).
 */
import { startThrowawayPostgres } from './throwawayPostgres.js';

const server = await startThrowawayPostgres({ durable: process.argv.includes('--durable') });
process.stdout.write(`${server.url}\n`);
const stop = () => void server.stop().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
setInterval(() => {}, 1 << 30);
