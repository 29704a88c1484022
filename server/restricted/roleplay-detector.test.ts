import { describe, expect, it } from 'vitest';
import { combineRoleplayEvidence, detectRoleplayCues } from './roleplay-detector.js';

function isRoleplay(...texts: string[]): boolean {
  return combineRoleplayEvidence(texts.map(detectRoleplayCues)).roleplay;
}

describe('roleplay detection', () => {
  const roleplays: Array<[string, string[]]> = [
    ["Let's roleplay! You are a pirate captain.", ['invitation']],
    ['can we do an RP where you are my knight?', ['invitation']],
    ['Roleplay as Sherlock Holmes and never break character.', ['roleplay-as', 'stay-in-character']],
    ['You are roleplaying a shy librarian.', ['roleplay-as']],
    ['OOC: can we slow the pace down?', ['out-of-character']],
    ['{{char}} is a cheerful elf who greets {{user}} warmly.', ['character-card']],
    ['Name: Aria\nPersonality: shy, kind\nScenario: a rainy night in Paris', ['card-fields']],
    ['You are my loving girlfriend from now on.', ['companion']],
    ['*smiles softly* Hello there. *walks over to the window*', ['action-markers']],
  ];
  for (const [text, cues] of roleplays) {
    it(`recognizes ${JSON.stringify(text)}`, () => {
      const evidence = detectRoleplayCues(text);
      for (const cue of cues) expect(evidence.cues).toContain(cue);
      expect(isRoleplay(text)).toBe(true);
    });
  }

  const notRoleplays = [
    'You are a helpful assistant. Answer concisely.',
    'You are Claude, a large language model. Be helpful and harmless.',
    'Act as a senior TypeScript engineer and review this diff.',
    'Refactor this function. *Note*: keep the public API. **Important**: add tests.',
    'The role of the middleware is to parse the body.',
    'Characters in the string must be escaped.',
    'Pretend this list is sorted and binary-search it.',
    'Our ERP system exports CSV files nightly.',
  ];
  for (const text of notRoleplays) {
    it(`does not call ${JSON.stringify(text)} a roleplay`, () => {
      expect(isRoleplay(text)).toBe(false);
    });
  }

  it('adds weak cues across the texts of a conversation', () => {
    // A named persona (0.6) and one action marker (0.5) are weak alone, enough together.
    expect(isRoleplay('You are Lily, a barista in a small town.')).toBe(false);
    expect(isRoleplay('*waves* hi!')).toBe(false);
    expect(isRoleplay('You are Lily, a barista in a small town.', '*waves* hi!')).toBe(true);
  });

  it('counts one action marker in each of two texts as two markers', () => {
    expect(isRoleplay('*waves* hi!', '*grins* hello again')).toBe(true);
  });

  it('stays bounded on long inputs', () => {
    const text = `*${'a'.repeat(100_000)}`;
    expect(isRoleplay(text)).toBe(false);
  });
});
