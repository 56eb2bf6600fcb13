export * from './toolPath.js';
export * from './planMode.js';
// The policies that match with RE2 (path globs, permission rules, bash deny patterns, and
// applyConfig, which installs them) are the `dsh/policies` entry (src/policies.ts), not `dsh`:
// re2js is ~46 KB gzipped, too much for the browser bundle budget of an entry that needs none of it.
