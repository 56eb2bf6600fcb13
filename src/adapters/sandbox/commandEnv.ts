/**
 * The environment a command gets (`bash`, command hooks, sandboxed MCP servers): an allowlist
 * (SPEC §10.8). Pure.
 *
 * Only the names in {@link BASE_ENV_NAMES} (and every `LC_*` locale name) pass, plus the names
 * the config passes (`sandbox.passEnv`); everything else in dsh's environment is withheld,
 * whatever it is called. A filter by name missed `OTEL_EXPORTER_OTLP_HEADERS`, `SENTRY_DSN`, an
 * `HTTPS_PROXY` with a password, `REDIS_URL`, `GH_PAT`, `DB_PW` (issue 31).
 */

/**
 * What every command may see, and why: where programs are (`PATH`), who and where the user is
 * (`HOME`, `USER`, `LOGNAME`, `SHELL`), the language and time zone (`LANG`, `LANGUAGE`, `LC_*`,
 * `TZ`), how to draw (`TERM`, `COLORTERM`, `NO_COLOR`, `FORCE_COLOR`), the temporary directory
 * (`TMPDIR`; the sandbox sets it to its private `/tmp`), and `CI` (tools turn off prompts and
 * progress bars under it), `SHLVL` (bash sources `~/.bashrc` when its stdin is a socket, as a
 * spawned process's is, unless it runs below another shell: the sandbox raises it to at least 1,
 * see `shellLevel`), and where toolchains live (`PYENV_ROOT`, `PYENV_VERSION`, `RBENV_ROOT`,
 * `NVM_DIR`, `NVM_BIN`, `ASDF_DIR`, `ASDF_DATA_DIR`, `VOLTA_HOME`, `CARGO_HOME`, `RUSTUP_HOME`,
 * `GOROOT`, `GOPATH`, `JAVA_HOME`: a shim or proxy on PATH, such as `~/.pyenv/shims/python`,
 * needs them to find the interpreter when it is not in the default place; issue 37). None of them
 * carries a credential by convention.
 */
export const BASE_ENV_NAMES: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TERM',
  'COLORTERM',
  'NO_COLOR',
  'FORCE_COLOR',
  'TMPDIR',
  'CI',
  'SHLVL',
  'PYENV_ROOT',
  'PYENV_VERSION',
  'RBENV_ROOT',
  'NVM_DIR',
  'NVM_BIN',
  'ASDF_DIR',
  'ASDF_DATA_DIR',
  'VOLTA_HOME',
  'CARGO_HOME',
  'RUSTUP_HOME',
  'GOROOT',
  'GOPATH',
  'JAVA_HOME',
];

const BASE = new Set(BASE_ENV_NAMES);

/**
 * The `SHLVL` a command gets: dsh's own, at least 1. bash reads `~/.bashrc` (and whatever a user's
 * rc prints, such as pyenv's "cannot rehash") when its stdin is a socket and its level is below 2;
 * a dsh started from a background job or a daemon can have `SHLVL=0` or none at all.
 */
export function shellLevel(env: Readonly<Record<string, string | undefined>>): string {
  const level = Number.parseInt(env.SHLVL ?? '', 10);
  return String(Number.isFinite(level) && level >= 1 ? level : 1);
}

/** Whether `name` passes without being named by the config: one of {@link BASE_ENV_NAMES}, or `LC_*`. */
export function isBaseEnvName(name: string): boolean {
  return BASE.has(name) || /^LC_[A-Z_]+$/.test(name);
}

export interface CommandEnv {
  /** What the command sees. */
  readonly env: Record<string, string>;
  /** The names left out, sorted (never their values). */
  readonly withheld: readonly string[];
}

/**
 * The allowlisted part of `env` (see the module note), plus the names in `passThrough`; then
 * `set` on top (e.g. `TMPDIR`). Values that are undefined are dropped.
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
    if (isBaseEnvName(name) || keep.has(name)) out[name] = value;
    else withheld.push(name);
  }
  Object.assign(out, options.set ?? {});
  return { env: out, withheld: withheld.sort() };
}
