/**
 * The two session store backends as the tests open them: `jsonl` in a fresh temp dir, `postgres`
 * on the database of `DSH_TEST_PG_URL` (test/store/pgGlobalSetup.ts starts a throwaway one).
 * `open()` can be called again for a second, independent instance on the same data (another
 * process's view: its own caches, its own connections).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createJsonlStore } from '../../src/adapters/store/jsonlStore.js';
import { openPostgresStore } from '../../src/adapters/store/pgStore.js';
import type { SessionStore } from '../../src/runtime/store/sessionStore.js';

export interface Backend {
  name: 'jsonl' | 'postgres';
  /** Why it cannot run here (no database outside CI), or undefined. */
  unavailable?: string;
  /** A new world: every `open()` of it sees the same sessions. */
  world(): { open(): Promise<SessionStore> };
}

export const pgUrl = () => process.env.DSH_TEST_PG_URL ?? '';

export const backends: Backend[] = [
  {
    name: 'jsonl',
    world() {
      const dir = mkdtempSync(join(tmpdir(), 'dsh-store-'));
      return { open: async () => createJsonlStore({ dir, fsync: false }) };
    },
  },
  {
    name: 'postgres',
    unavailable: pgUrl() ? undefined : 'no DSH_TEST_PG_URL and no PostgreSQL installed',
    world() {
      return { open: () => openPostgresStore({ connectionString: pgUrl(), maxConnections: 4 }) };
    },
  },
];

let n = 0;
/** A session id no other test (or earlier run on the same database) uses. */
export const freshSession = (what: string) => `${what}-${process.pid}-${Date.now().toString(36)}-${++n}`;
