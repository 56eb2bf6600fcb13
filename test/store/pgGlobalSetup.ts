/**
 * vitest globalSetup: a real PostgreSQL for the store tests. `DSH_TEST_PG_URL` set: that database
 * is used as it is. Otherwise a throwaway cluster is started (scripts/throwawayPostgres.ts) and
 * its URL is handed to the tests as `DSH_TEST_PG_URL`. No server installed: the Postgres tests
 * skip, except under CI (`CI=true`), where that is an error: no Postgres test is skipped in CI.
 */
import type { TestProject } from 'vitest/node';
import { findPostgresBin, startThrowawayPostgres, type ThrowawayPostgres } from '../../scripts/throwawayPostgres.js';

let server: ThrowawayPostgres | undefined;

export async function setup(project: TestProject) {
  let url = process.env.DSH_TEST_PG_URL ?? '';
  if (!url) {
    if (findPostgresBin()) {
      server = await startThrowawayPostgres();
      if (process.env.DSH_DEBUG_PG) process.stderr.write(`throwaway postgres for ${project.name}: ${server.url}\n`);
      url = server.url;
    } else if (process.env.CI === 'true') {
      throw new Error('CI=true and no PostgreSQL: install it (apt-get install postgresql) or set DSH_TEST_PG_URL');
    }
  }
  process.env.DSH_TEST_PG_URL = url;
  project.provide('pgUrl', url);
}

export async function teardown() {
  await server?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string;
  }
}
