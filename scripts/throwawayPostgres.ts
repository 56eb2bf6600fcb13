/**
 * A throwaway PostgreSQL cluster for tests and benchmarks: `initdb` in a temp dir, `postgres` on
 * 127.0.0.1 on a free port (and a Unix socket in the same dir), trust auth, one database `dsh`.
 * Postgres refuses to run as root: as root the cluster is made and run as the `postgres` user
 * (Debian's package creates it; else a system user `dsh-postgres` is created), spawned with its
 * uid/gid; as anyone else, as the current user.
 *
 * Binaries: `$DSH_PG_BIN` (a directory with initdb and postgres), else `initdb` on PATH, else the
 * newest /usr/lib/postgresql/N/bin (Debian's `postgresql` package). `.ci/run` installs it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ThrowawayPostgres {
  /** postgres://…@127.0.0.1:PORT/dsh */
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  stop(): Promise<void>;
  /**
   * Stops the server (`fast`: SIGINT, open transactions rolled back, clients disconnected;
   * `immediate`: SIGQUIT, no shutdown checkpoint, crash recovery on the next start), waits `downMs`,
   * and starts it again on the same port and data; resolves once it accepts connections.
   */
  restart(mode: 'fast' | 'immediate', downMs?: number): Promise<void>;
}

/** The directory holding initdb and postgres, or undefined when none is installed. */
export function findPostgresBin(): string | undefined {
  const fromEnv = process.env.DSH_PG_BIN;
  if (fromEnv && existsSync(join(fromEnv, 'initdb'))) return fromEnv;
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres'))) return dir;
  }
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], 'bin');
  }
  return undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** uid/gid of the `postgres` user when this process is root (spawned as it: signals reach it directly). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (!isRoot()) return undefined;
  const id = (flag: string, user: string) => Number(execFileSync('id', [flag, user], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  for (const user of ['postgres', 'dsh-postgres']) {
    try {
      return { uid: id('-u', user), gid: id('-g', user) };
    } catch {
      // no such user: try the next, else create one
    }
  }
  execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'dsh-postgres'], { stdio: 'ignore' });
  return { uid: id('-u', 'dsh-postgres'), gid: id('-g', 'dsh-postgres') };
}

export interface ThrowawayPostgresOptions {
  bin?: string;
  log?: (line: string) => void;
  /** Keep the server's durability settings (fsync, synchronous_commit on: for benchmarks); default off (tests). */
  durable?: boolean;
}

export async function startThrowawayPostgres(options: ThrowawayPostgresOptions = {}): Promise<ThrowawayPostgres> {
  const bin = options.bin ?? findPostgresBin();
  if (!bin) throw new Error('no PostgreSQL server found (set DSH_PG_BIN, or apt-get install postgresql)');
  const dir = mkdtempSync(join(tmpdir(), 'dsh-pg-'));
  const data = join(dir, 'data');
  const user = serverUser();
  if (user) chownSync(dir, user.uid, user.gid);
  chmodSync(dir, 0o700);
  execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'dsh', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'], { stdio: 'pipe', ...user, cwd: dir });
  const port = await freePort();
  const args = [
    '-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', 'max_connections=300',
    // A test cluster: speed over durability of the cluster itself (the store still commits per append).
    ...(options.durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
  ];
  let stderr = '';
  let child!: ChildProcess;
  let exited!: Promise<void>;
  const spawnServer = () => {
    child = spawn(join(bin, 'postgres'), args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir, ...user });
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (stderr.length > 64 << 10) stderr = stderr.slice(-32 << 10);
      options.log?.(d.toString());
    });
    const c = child;
    exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
  };
  // Ready once it accepts a connection to the bootstrap database; then create `dsh`.
  const { default: pg } = await import('pg');
  const ready = async () => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`postgres exited (${child.exitCode}): ${stderr}`);
      const client = new pg.Client({ host: '127.0.0.1', port, user: 'dsh', database: 'postgres' });
      try {
        await client.connect();
        const has = await client.query(`SELECT 1 FROM pg_database WHERE datname = 'dsh'`);
        if (has.rowCount === 0) await client.query('CREATE DATABASE dsh');
        await client.end();
        return;
      } catch (e) {
        await client.end().catch(() => {});
        if (Date.now() > deadline) {
          child.kill('SIGKILL');
          throw new Error(`postgres did not accept connections: ${String(e)}\n${stderr}`);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  spawnServer();
  await ready();
  return {
    url: `postgres://dsh@127.0.0.1:${port}/dsh`,
    port,
    dir,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGINT'); // fast shutdown
        const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
        await exited;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    },
    async restart(mode, downMs = 0) {
      if (child.exitCode === null) {
        child.kill(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
        await exited;
      }
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      spawnServer();
      await ready();
    },
  };
}
