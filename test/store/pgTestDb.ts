/** A fresh database on the test server for each test that uses the queue (its own jobs, its own workers). */
import pg from 'pg';
import { pgUrl } from './backends.js';

let n = 0;
export async function freshDatabase(): Promise<string> {
  const base = new URL(pgUrl());
  const name = `t_${process.pid}_${Date.now().toString(36)}_${++n}`;
  const admin = new pg.Client({ connectionString: pgUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  base.pathname = `/${name}`;
  return base.toString();
}
