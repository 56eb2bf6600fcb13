// SPEC §10.6: control characters a model, tool, hook or log chose are shown, never obeyed.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundedVisible, containsControlCharacters, hasControlCharacters, MAX_MODEL_FACING_CHARS, visible, visibleLine } from '../../src/protocol/visibleText.js';

const shown = [
  ...Array.from({ length: 0x20 }, (_, i) => i).filter((c) => c !== 0x09 && c !== 0x0a),
  0x7f,
  ...Array.from({ length: 0x20 }, (_, i) => 0x80 + i),
  0x061c, 0x200b, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2060, 0x2066, 0x2067, 0x2068, 0x2069, 0xfeff,
];

describe('visible', () => {
  it.each(shown)('U+%s is shown as its \\u escape', (code) => {
    const c = String.fromCharCode(code);
    expect(visible(`a${c}b`)).toBe(`a\\u${code.toString(16).padStart(4, '0')}b`);
    expect(hasControlCharacters(c)).toBe(true);
  });

  it('keeps newline, tab, printable text, emoji joiners and non-Latin scripts', () => {
    const text = 'line one\n\tindented: é ß 漢字 👨‍👩‍👧 → ✓';
    expect(visible(text)).toBe(text);
    expect(hasControlCharacters(text)).toBe(false);
  });

  it('the escapes of the attacks: a cursor move, OSC 52, a title, a right-to-left override', () => {
    expect(visible('rm -rf victim #\x1b[15D\x1b[Kgit status')).toBe('rm -rf victim #\\u001b[15D\\u001b[Kgit status');
    expect(visible('\x1b]52;c;Y3VybA==\x07')).toBe('\\u001b]52;c;Y3VybA==\\u0007');
    expect(visible('\u009b2J')).toBe('\\u009b2J');
    expect(visible('file\u202etxt.exe')).toBe('file\\u202etxt.exe');
  });

  it('the result never holds a character it would show escaped', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => !hasControlCharacters(visible(s))));
  });

  it('a JSON line stays valid JSON with the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const line = visible(JSON.stringify(v));
        expect(JSON.parse(line)).toEqual(JSON.parse(JSON.stringify(v)));
      }),
    );
    expect(JSON.parse(visible(JSON.stringify({ t: 'a\u009b\u202eb' })))).toEqual({ t: 'a\u009b\u202eb' });
  });
});

describe('containsControlCharacters', () => {
  it('looks at keys and values, deeply', () => {
    expect(containsControlCharacters({ command: 'ls' })).toBe(false);
    expect(containsControlCharacters({ a: [{ b: 'x\ry' }] })).toBe(true);
    expect(containsControlCharacters({ ['k\x1b']: 1 })).toBe(true);
    expect(containsControlCharacters('plain')).toBe(false);
    expect(containsControlCharacters(42)).toBe(false);
  });

  it('a value too deep to look at counts as holding one (the question says so rather than vouching)', () => {
    let deep: unknown = 'ok';
    for (let i = 0; i < 100; i++) deep = { d: deep };
    expect(containsControlCharacters(deep)).toBe(true);
  });
});

describe('boundedVisible', () => {
  it('cuts what reaches the model to the bound, saying how much was cut', () => {
    const binary = Array.from({ length: 10_108 }, (_, i) => String.fromCharCode(i % 256)).join('');
    const out = boundedVisible(binary);
    expect(hasControlCharacters(out)).toBe(false);
    expect(out.length).toBeLessThan(MAX_MODEL_FACING_CHARS + 40);
    expect(out).toMatch(/… \(\d+ more chars cut\)$/);
    expect(boundedVisible('short reason')).toBe('short reason');
  });
});

describe('visibleLine', () => {
  it('keeps a config path or a command on one line: newline and tab escaped as well', () => {
    expect(visibleLine('a\nb\tc\x1bd')).toBe('a\\u000ab\\u0009c\\u001bd');
    expect(visibleLine('plain text')).toBe('plain text');
  });
});
