#!/usr/bin/env node
/**
 * The `dsh` executable (compiled to dist/src/cli/bin.js, then bundled into package.json's `bin`,
 * dist/cli/bin.js, by scripts/bundleCli.ts): runs main.ts on the process's arguments.
 * `dsh --version` alone is answered before main.ts and its commands load.
 */
const argv = process.argv.slice(2);

// `dsh log big.jsonl | head`: a closed pipe ends the output, quietly.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});

if (argv.length === 1 && argv[0] === '--version') {
  const { packageVersion } = await import('./version.js');
  process.stdout.write(`${packageVersion()}\n`);
} else {
  const { main } = await import('./main.js');
  process.exitCode = await main(argv, console.log, console.error, process.env, (code) => process.exit(code));
}
