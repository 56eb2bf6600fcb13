/** docs/protocol.schema.json is generated from the wire protocol's zod schemas; a stale file fails here. */
import { readFile } from 'node:fs/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { PROTOCOL_SCHEMA_FILE, renderProtocolSchema } from '../../scripts/protocolSchema.js';

describe('docs/protocol.schema.json', () => {
  it('is what the zod schemas render to (else: npm run docs:protocol)', async () => {
    const committed = await readFile(PROTOCOL_SCHEMA_FILE, 'utf8');
    expect(committed === renderProtocolSchema(), 'docs/protocol.schema.json is stale: run `npm run docs:protocol` and commit it').toBe(true);
  });

  it('accepts the documented commands and refuses unknown answers and keys (as a non-JS client would check them)', () => {
    const doc = JSON.parse(renderProtocolSchema()) as { $defs: Record<string, object> };
    const ajv = new Ajv2020({ strict: false });
    const answer = ajv.compile(doc.$defs.answerApproval!);
    expect(answer({ answer: 'deny', reason: 'not that file' })).toBe(true);
    expect(answer({ answer: 'allow-once' })).toBe(true);
    expect(answer({ answer: 'maybe' })).toBe(false);
    expect(answer({ answer: 'allow-once', extra: 1 })).toBe(false);
    const live = ajv.compile(doc.$defs.liveFrame!);
    expect(live({ type: 'hello', protocol: 1, sessionId: 's', lastSeq: 0 })).toBe(true);
    expect(live({ type: 'hello', protocol: 2, sessionId: 's', lastSeq: 0 })).toBe(false);
    const turn = ajv.compile(doc.$defs.startTurn!);
    expect(turn({ input: 'go' })).toBe(true);
    expect(turn({ input: '' })).toBe(false);
  });
});
