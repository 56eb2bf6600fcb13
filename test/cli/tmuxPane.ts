/**
 * `dsh` on a real terminal: a tmux server of the test file's own, a pane per run. The pane runs dsh
 * with the given environment and prints `exit=N` when it ends; `shot` reads the screen (with its
 * escape sequences, `-e`, when asked), `see` waits for it to show something (the bound only
 * catches a hang), `keys` types, `title` reads the pane's title.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { dshArgv, waitFor } from './spawnDsh.js';

export const hasTmux = spawnSync('tmux', ['-V']).status === 0;

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * `tmux -L socket ARGS`. A `new-session` that finds the server gone while it starts (seen on a
 * loaded machine: "server exited unexpectedly") is tried once more on a fresh server.
 */
export function tmuxCommand(socket: string): (...args: string[]) => string {
  return (...args) => {
    try {
      return execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      const stderr = String((e as { stderr?: unknown }).stderr ?? '');
      if (args[0] !== 'new-session' || !/server exited unexpectedly|error connecting|no server running|lost server/i.test(stderr)) throw e;
      return execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
    }
  };
}

export function tmuxServer(name: string) {
  const socket = `dsh-${name}-${process.pid}`;
  const tmux = tmuxCommand(socket);
  return {
    /** Starts `dsh ARGS` in `dir` in a new session `session` of 160×50 (or `size`). */
    pane(session: string, dir: string, args: readonly string[], env: Readonly<Record<string, string>>, size: readonly [number, number] = [160, 50]) {
      const vars = Object.entries(env).map(([k, v]) => `${k}=${q(v)}`).join(' ');
      tmux('new-session', '-d', '-s', session, '-x', String(size[0]), '-y', String(size[1]), '-c', dir, `env ${vars} ${dshArgv(...args).map(q).join(' ')}; echo "exit=$?"; sleep 600`);
      const shot = (escapes = false) => tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', session);
      return {
        shot,
        see: (re: RegExp, what: string) => waitFor(() => re.test(shot()) && shot(), what, 90_000),
        keys: (...k: string[]) => tmux('send-keys', '-t', session, ...k),
        setTitle: (title: string) => tmux('select-pane', '-t', session, '-T', title),
        title: () => tmux('display-message', '-p', '-t', session, '#{pane_title}').trim(),
        close: () => tmux('kill-session', '-t', session),
      };
    },
    /** Ends the server and every pane left. */
    kill: () => void spawnSync('tmux', ['-L', socket, 'kill-server']),
  };
}
