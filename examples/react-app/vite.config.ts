// Builds the example with the repository's own Vite (`npm run example:react`, output in
// examples/react-app/dist/). `dsh` resolves to the library's sources, as the published entry
// (`dist/src/index.js`) would: a web app that installs dsh imports it the same way.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: './',
  resolve: { alias: [{ find: /^dsh$/, replacement: here('../../src/index.ts') }] },
  build: { outDir: here('dist'), emptyOutDir: true, target: 'es2022' },
});
