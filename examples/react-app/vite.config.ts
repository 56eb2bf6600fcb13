// Builds the example with the repository's own Vite (`npm run example:react`, output in
// examples/react-app/dist/). `dsh`, `dsh/protocol`, `dsh/view` and `dsh/react` resolve to the library's sources, as the
// published entries (`dist/src/index.js`, `dist/src/react/index.js`) would: a web app that installs
// dsh imports them the same way.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: './',
  resolve: {
    alias: [
      { find: /^dsh$/, replacement: here('../../src/index.ts') },
      { find: /^dsh\/(protocol|view)$/, replacement: here('../../src/$1.ts') },
      { find: /^dsh\/react$/, replacement: here('../../src/react/index.ts') },
    ],
  },
  build: { outDir: here('dist'), emptyOutDir: true, target: 'es2022' },
});
