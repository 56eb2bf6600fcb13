// Builds the web app example's page (`npm run example:web`, output in examples/web-app/dist/).
// `dsh/client` and `dsh/react` resolve to the library's sources, as the published entries would.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: '/',
  resolve: {
    alias: [
      { find: /^dsh\/client$/, replacement: here('../../src/client/index.ts') },
      { find: /^dsh\/react$/, replacement: here('../../src/react/index.ts') },
    ],
  },
  // Two pages: the dsh page (index.html) and the same sessions in `useChat` (chat.html).
  build: { outDir: here('dist'), emptyOutDir: true, target: 'es2022', rollupOptions: { input: { main: here('index.html'), chat: here('chat.html') } } },
});
