#!/usr/bin/env node
/** The `dsh` executable (package.json `bin`, compiled to dist/src/cli/bin.js): runs main.ts on the process's arguments. */
import { main } from './main.js';

// `dsh log big.jsonl | head`: a closed pipe ends the output, quietly.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});

process.exitCode = await main(process.argv.slice(2));
