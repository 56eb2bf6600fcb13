/**
 * The environment a sandboxed command gets: dsh's own, less its secrets (SPEC §10.2). Pure.
 *
 * A name is a secret when it contains `KEY`, `TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`,
 * `CREDENTIAL` or `AUTH` (any case: `OPENAI_API_KEY`, `GITHUB_TOKEN`, `PGPASSWORD`,
 * `GOOGLE_APPLICATION_CREDENTIALS`, `SSH_AUTH_SOCK`), or is one of the URLs that carry a password
 * (`DSH_DATABASE_URL`, `DATABASE_URL`). Names in `passThrough` are kept whatever they look like.
 */

const SECRET_PARTS = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH/i;
const SECRET_NAMES = new Set(['DSH_DATABASE_URL', 'DATABASE_URL']);

/** Whether an environment variable's name marks it as a secret (see the module note). */
export function isSecretName(name: string): boolean {
  return SECRET_PARTS.test(name) || SECRET_NAMES.has(name.toUpperCase());
}

export interface CommandEnv {
  /** What the command sees. */
  readonly env: Record<string, string>;
  /** The names left out, sorted (never their values). */
  readonly withheld: readonly string[];
}

/**
 * `env` without its secrets, keeping the names in `passThrough`; then `set` on top (e.g.
 * `TMPDIR`). Values that are undefined are dropped.
 */
export function commandEnv(
  env: Readonly<Record<string, string | undefined>>,
  options: { passThrough?: readonly string[]; set?: Readonly<Record<string, string>> } = {},
): CommandEnv {
  const keep = new Set(options.passThrough ?? []);
  const out: Record<string, string> = {};
  const withheld: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (isSecretName(name) && !keep.has(name)) withheld.push(name);
    else out[name] = value;
  }
  Object.assign(out, options.set ?? {});
  return { env: out, withheld: withheld.sort() };
}
