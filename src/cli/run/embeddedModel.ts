/**
 * The embedded default model of `dsh run` (no key, no network): a scripted model that works on the
 * real directory. In one turn it reads a file and greps and globs in parallel, proposes an edit
 * (which needs approval), runs a command, and answers with what happened — also when the edit or
 * the command was denied or failed. A new one is made for every turn.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import { scriptedModel, type ScriptedModel, type ScriptedRequest, type ScriptedResponse } from '../../adapters/model/scriptedModel.js';

export interface EmbeddedModelOptions {
  /** The directory the tools work in (the same root as the built-in tools). */
  cwd: string;
  /** Called as the first request arrives (the cold-start benchmark stops there). */
  onRequest?: (index: number) => void;
  /** Delay in ms before each streamed text piece (default 15: the text arrives as a stream). */
  textDelayMs?: number;
}

/** The file the demo reads and edits: README.md when present, else the first small text file at the top. */
export function pickTarget(cwd: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(cwd).filter((n) => !n.startsWith('.')).sort();
  } catch {
    return undefined;
  }
  const ordered = [...names.filter((n) => /^readme(\.md|\.txt)?$/i.test(n)), ...names];
  for (const name of ordered) {
    try {
      const st = statSync(join(cwd, name));
      if (!st.isFile() || st.size === 0 || st.size > 256 * 1024) continue;
      const text = readFileSync(join(cwd, name), 'utf8');
      if (!text.includes('\u0000') && uniqueLine(text)) return name;
    } catch {
      // unreadable: try the next one
    }
  }
  return undefined;
}

/** The first non-blank line that occurs once in the text (what the edit replaces). */
function uniqueLine(text: string): string | undefined {
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  return lines.find((l) => l.trim().length > 0 && text.split(l).length === 2);
}

const words = (s: string) => s.match(/\S+\s*/g) ?? [s];

/** The tool results of this turn so far, by tool name (the last one of each). */
function results(prompt: LanguageModelV3Prompt): Map<string, { ok: boolean; text: string }> {
  const out = new Map<string, { ok: boolean; text: string }>();
  const lastUser = prompt.map((m) => m.role).lastIndexOf('user');
  for (const m of prompt.slice(lastUser + 1)) {
    if (m.role !== 'tool') continue;
    for (const part of m.content) {
      if (part.type !== 'tool-result') continue;
      const o = part.output as { type: string; value?: unknown };
      const text = typeof o.value === 'string' ? o.value : JSON.stringify(o.value ?? '');
      out.set(part.toolName, { ok: o.type !== 'error-text' && o.type !== 'error-json', text });
    }
  }
  return out;
}

const firstLine = (s: string) => s.split('\n', 1)[0]!.slice(0, 200);

export function embeddedModel(options: EmbeddedModelOptions): ScriptedModel {
  const { cwd } = options;
  const target = pickTarget(cwd);
  const say = (text: string) => words(text);
  const steps = [
    (): ScriptedResponse => ({
      text: say(`Let me look around${target ? `, starting with ${target}` : ''}.`),
      toolCalls: [
        ...(target ? [{ toolName: 'read', input: { path: target } }] : []),
        { toolName: 'grep', input: { pattern: 'TODO|FIXME', maxResults: 20 } },
        { toolName: 'glob', input: { pattern: '*', maxResults: 50 } },
      ],
    }),
    (): ScriptedResponse => {
      const line = target ? uniqueLine(readFileSync(join(cwd, target), 'utf8')) : undefined;
      if (target && line !== undefined) {
        return {
          text: say(`I'll mark ${target} as reviewed; that changes the file, so it needs your approval.`),
          toolCalls: [{ toolName: 'edit', input: { path: target, oldString: line, newString: `${line} (reviewed by dsh)` } }],
        };
      }
      return {
        text: say(`There is no text file to mark, so I'll write a note; that needs your approval.`),
        toolCalls: [{ toolName: 'write', input: { path: 'dsh-notes.md', content: '# Notes\n\nReviewed by dsh.\n' } }],
      };
    },
    (): ScriptedResponse => ({
      text: say('Now a command, to see what is here.'),
      toolCalls: [{ toolName: 'bash', input: { command: 'ls -1 | head -n 20' } }],
    }),
    ({ prompt }: ScriptedRequest): ScriptedResponse => {
      const r = results(prompt);
      const parts: string[] = [];
      const grep = r.get('grep');
      if (grep) parts.push(grep.ok ? `the search for TODO/FIXME returned: ${firstLine(grep.text) || '(nothing)'}` : `the search failed (${firstLine(grep.text)})`);
      const change = r.get('edit') ?? r.get('write');
      if (change) parts.push(change.ok ? `the change went through (${firstLine(change.text)})` : `the change was not made (${firstLine(change.text)})`);
      const bash = r.get('bash');
      if (bash) parts.push(bash.ok ? 'the command ran' : `the command did not run (${firstLine(bash.text)})`);
      return { text: say(`Done: ${parts.join('; ')}. (This was the embedded scripted model: pass --model provider:model for a real one.)`) };
    },
  ];
  const delay = options.textDelayMs ?? 15;
  return scriptedModel(
    steps.map((step) => (req: ScriptedRequest) => {
      options.onRequest?.(req.index);
      const response = step(req);
      // Call ids stay unique in the session (a provider may reject a repeated one on resume):
      // turn n > 1 prefixes them with `t<n>-`.
      const turn = req.prompt.filter((m) => m.role === 'user').length;
      if (turn <= 1 || !response.toolCalls) return response;
      return { ...response, toolCalls: response.toolCalls.map((c, i) => ({ ...c, toolCallId: `t${turn}-call-${req.index + 1}-${i}` })) };
    }),
    { modelId: 'dsh-embedded', chunkDelayMs: (part) => (part.type === 'text-delta' ? delay : 0) },
  );
}
