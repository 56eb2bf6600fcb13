/**
 * Issue 24 item 5: 40 processes' worth of start-ups at once on a fresh database (each its own pool,
 * so its own connections, as separate processes have): every `openPostgresStore` +
 * `migrateTurnQueue` succeeds. graphile-worker 0.16 installs its schema without a lock; two
 * installers used to collide (`duplicate key … "pg_namespace_nspname_index"`).
 */
import { describe, expect, it } from 'vitest';
import { migrateTurnQueue } from '../../src/adapters/store/pgQueue.js';
import { openPostgresStore, type PostgresSessionStore } from '../../src/adapters/store/pgStore.js';
import { pgUrl } from './backends.js';
import { freshDatabase } from './pgTestDb.js';

const test = pgUrl() ? it : it.skip;

describe('migrations on a fresh database', () => {
  test('40 start-ups at once: all succeed', async () => {
    const url = await freshDatabase();
    const stores: PostgresSessionStore[] = [];
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 40 }, async () => {
          const store = await openPostgresStore({ connectionString: url, maxConnections: 2 });
          stores.push(store);
          await migrateTurnQueue(store.pool);
        }),
      );
      expect(results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []))).toEqual([]);
      const r = await stores[0]!.pool.query(`SELECT count(*)::int AS n FROM graphile_worker.migrations`);
      expect(r.rows[0].n).toBeGreaterThan(0);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  }, 240_000);
});
