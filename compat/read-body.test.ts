import { describe, expect, it } from 'vitest';
import { jsonTextNestsDeeperThan, nestsDeeperThan } from './read-body.js';

describe('jsonTextNestsDeeperThan', () => {
  it('counts the brackets of objects and arrays as the parsed value nests', () => {
    for (const text of ['{"a":[1,{"b":[]}]}', '[[[]]]', '{}', '1', '"text"', '{"a":{"b":{"c":{}}}}']) {
      for (const limit of [1, 2, 3, 4, 5]) {
        expect(jsonTextNestsDeeperThan(text, limit), `${text} past ${limit}`).toBe(nestsDeeperThan(JSON.parse(text), limit));
      }
    }
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(jsonTextNestsDeeperThan('{"a":"[[[[{{{{"}', 2)).toBe(false);
    expect(jsonTextNestsDeeperThan('{"a":"\\"[[[[{{{{"}', 2)).toBe(false);
    expect(jsonTextNestsDeeperThan('{"a":"\\\\","b":[[[1]]]}', 3)).toBe(true);
    expect(jsonTextNestsDeeperThan('{"a":"x\\\\\\"[[[["}', 2)).toBe(false);
  });

  it('reads a string as bytes and as text alike, and leaves broken JSON to the parser', () => {
    const deep = `${'['.repeat(50)}${']'.repeat(50)}`;
    expect(jsonTextNestsDeeperThan(Buffer.from(deep), 49)).toBe(true);
    expect(jsonTextNestsDeeperThan(deep, 50)).toBe(false);
    expect(jsonTextNestsDeeperThan('{"a":"never closed [[[[[[[', 2)).toBe(false);
  });
});
