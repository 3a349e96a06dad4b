import { describe, expect, it } from 'vitest';
import { ClientJsonError, clientText, parseClientJson } from '../src/index.ts';

// Pure logic: the strict JSON body rule (services run it on the real stack too).
const parse = (text: string | Buffer, contentType?: string) =>
  parseClientJson(typeof text === 'string' ? Buffer.from(text) : text, { contentType });
const refusal = (text: string | Buffer, contentType?: string) => {
  try {
    parse(text, contentType);
  } catch (error) {
    if (error instanceof ClientJsonError) return { kind: error.kind, issues: error.issues };
    throw error;
  }
  throw new Error(`accepted: ${String(text)}`);
};

describe('parseClientJson', () => {
  it('parses what JSON.parse parses when nothing is odd', () => {
    expect(parse('{"a":[1,-2.5e3,"x",{"b":null}],"c":true}')).toEqual({
      a: [1, -2500, 'x', { b: null }],
      c: true,
    });
    expect(parse('\ufeff{"a":"😀 \\ud83d\\ude00 C:\\\\u0000"}')).toEqual({ a: '😀 😀 C:\\u0000' });
    expect(parse('')).toEqual({});
    expect(
      parse('{"n":9007199254740991,"m":-9007199254740991}', 'application/json; charset="UTF-8"'),
    ).toEqual({
      n: 9007199254740991,
      m: -9007199254740991,
    });
  });

  it('names the path of each problem', () => {
    expect(refusal('{"a":{"b":[0,{"c":1,"c":2}]}}').issues).toEqual([
      { path: 'a.b.1.c', code: 'duplicate_key', message: expect.stringMatching(/"c"/) },
    ]);
    expect(refusal('{"a":1,"\\u0061":2}').issues[0]).toMatchObject({
      path: 'a',
      code: 'duplicate_key',
    });
    expect(refusal('{"a":["ok","x\\u0000"]}').issues[0]).toMatchObject({
      path: 'a.1',
      code: 'unstorable_text',
    });
    expect(refusal('{"k\\u0000":1}').issues[0]?.message).toMatch(/^key contains NUL/);
    expect(refusal('{"s":"\\udc00"}').issues[0]?.message).toMatch(/unpaired surrogate \(U\+DC00\)/);
    expect(refusal('{"n":[1,9007199254740993]}').issues[0]).toMatchObject({
      path: 'n.1',
      code: 'unsafe_number',
    });
    expect(refusal('{"n":-1e400}').issues[0]?.code).toBe('unsafe_number');
    expect(refusal(`{"d":${'['.repeat(40)}${']'.repeat(40)}}`).issues).toEqual([
      { path: `d${'.0'.repeat(31)}`, code: 'too_deep', message: expect.any(String) },
    ]);
  });

  it('keys with the same name in different objects are not duplicates', () => {
    expect(parse('[{"a":1},{"a":2}]')).toEqual([{ a: 1 }, { a: 2 }]);
    expect(parse('{"a":{"a":{"a":1}}}')).toEqual({ a: { a: { a: 1 } } });
  });

  it('refuses other charsets (415), bytes that are not UTF-8, and non-JSON (400)', () => {
    expect(refusal('{}', 'application/json; charset=latin1').kind).toBe('charset');
    expect(refusal('{}', 'application/json;charset=UTF-16').kind).toBe('charset');
    expect(refusal(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d])).kind).toBe('encoding');
    expect(refusal(Buffer.from([0x5b, 0xed, 0xa0, 0x80, 0x5d])).kind).toBe('encoding');
    expect(refusal('"just a string"').kind).toBe('syntax');
    expect(refusal('{"a":').kind).toBe('syntax');
  });
});

describe('clientText', () => {
  const line = clientText({ max: 20 });
  const free = clientText({ max: 20, min: 0, multiline: true });
  it('refuses NUL, unpaired surrogates and control characters; keeps lines in free text', () => {
    for (const bad of ['a\u0000', '\ud800', 'a\u0001', 'a\n', 'a\u007f', 'a\u009b']) {
      expect(line.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
    expect(free.safeParse('a\nb\tc\r\n').success).toBe(true);
    expect(free.safeParse('\u001b[2J').success).toBe(false);
    expect(line.safeParse('café ☕ 😀 إلغاء').success).toBe(true);
    expect(line.optional().safeParse(undefined).success).toBe(true);
  });
});
