import { describe, expect, it } from 'vitest';
import { findPatternProblem, usageRulesSchema, type UsageRulesInput } from '../catalog/usage-rules.schema.js';
import { DEFAULT_USAGE_RULES } from './default-usage-rules.js';
import { compileUsageRules, type UsageCheckInput } from './usage-rules.js';
import { MIN_SHARE, allocateScanShares, checkUsage } from './usage-run.js';

const rules = compileUsageRules(DEFAULT_USAGE_RULES);

type Texts = UsageCheckInput['texts'];

const CODING_SYSTEM_PROMPT =
  'You are a senior software engineer. Answer with working TypeScript. Refuse requests for malware. ' +
  'Never produce sexual content involving minors, graphic violence, or threats.';

describe('usageRulesSchema', () => {
  it('accepts the default rules', () => {
    expect(() => usageRulesSchema.parse(DEFAULT_USAGE_RULES)).not.toThrow();
  });

  it('fills defaults', () => {
    const parsed = usageRulesSchema.parse({ rules: [{ id: 'x', description: 'x', action: 'flag', categories: ['hate'] }] });
    expect(parsed.rules[0]).toMatchObject({ categoryMatch: 'any', patternMatch: 'any', roleplayOnly: false, enabled: true });
    expect(parsed.thresholds).toEqual({});
    expect(parsed.scanBudget).toBe(20 * 1024 * 1024);
  });

  const invalid: Array<[string, unknown]> = [
    ['a rule with neither categories nor patterns', { rules: [{ id: 'x', description: 'x', action: 'flag' }] }],
    ['an unknown category', { rules: [{ id: 'x', description: 'x', action: 'flag', categories: ['illicit'] }] }],
    ['an unknown action', { rules: [{ id: 'x', description: 'x', action: 'block', categories: ['hate'] }] }],
    ['a threshold above 1', { rules: [{ id: 'x', description: 'x', action: 'flag', categories: ['hate'], threshold: 1.5 }] }],
    ['an unknown field', { rules: [{ id: 'x', description: 'x', action: 'flag', categories: ['hate'], weight: 2 }] }],
    ['duplicate ids', { rules: [{ id: 'x', description: 'x', action: 'flag', categories: ['hate'] }, { id: 'x', description: 'y', action: 'reject', categories: ['sexual'] }] }],
    ['a pattern that does not compile', { rules: [{ id: 'x', description: 'x', action: 'flag', patterns: ['(unclosed'] }] }],
    ['a pattern with nested quantifiers', { rules: [{ id: 'x', description: 'x', action: 'flag', patterns: ['(a+)+$'] }] }],
    ['a pattern with a backreference', { rules: [{ id: 'x', description: 'x', action: 'flag', patterns: ['(\\w)\\1'] }] }],
    ['a bad id', { rules: [{ id: 'Not An Id', description: 'x', action: 'flag', categories: ['hate'] }] }],
  ];
  for (const [name, configuration] of invalid) {
    it(`refuses ${name}`, () => {
      expect(usageRulesSchema.safeParse(configuration).success).toBe(false);
    });
  }

  it('explains why a pattern is refused', () => {
    expect(findPatternProblem('(x+x+)+y')).toMatch(/backtrack/);
    expect(findPatternProblem('\\bkill\\b')).toBeNull();
  });

  it('compiles from plain rules on first use and caches them', () => {
    const plain: UsageRulesInput = { rules: [{ id: 'no-pirates', description: 'x', action: 'reject', patterns: ['\\bpirates?\\b'] }] };
    expect(checkUsage({ texts: [{ role: 'user', text: 'Tell me about PIRATES' }] }, plain)).toMatchObject({ action: 'reject', ruleId: 'no-pirates' });
    expect(checkUsage({ texts: [{ role: 'user', text: 'Tell me about ninjas' }] }, plain).action).toBe('allow');
  });
});

describe('checkUsage with the default rules', () => {
  const allowed: Array<[string, Texts]> = [
    ['a coding question under a strict system prompt', [
      { role: 'system', text: CODING_SYSTEM_PROMPT },
      { role: 'user', text: 'How do I kill a child process in Node.js and restart the worker?' },
    ]],
    ['a multi-turn assistant chat', [
      { role: 'developer', text: 'Be concise.' },
      { role: 'user', text: 'Shoot me a summary of the meeting notes.' },
      { role: 'assistant', text: 'Sure: the team agreed to execute the migration on Friday.' },
      { role: 'user', text: 'Great, and remind me to kill the staging server afterwards.' },
    ]],
    ['a tool result with technical text', [
      { role: 'user', text: 'What does this log say?' },
      { role: 'tool', text: 'ERROR: child process 4242 killed by SIGKILL; parent terminated all children.' },
    ]],
    ['an adult fantasy roleplay without sexual content', [
      { role: 'system', text: "Let's roleplay. You are Aria, a 30-year-old elven ranger. Stay in character." },
      { role: 'user', text: '*draws my sword* We ride for the mountain pass at dawn.' },
    ]],
    ['a roleplay with a young character and no sexual or romantic content', [
      { role: 'system', text: "Let's roleplay: you are Tom, a 12 year old wizard apprentice on his first day at school." },
      { role: 'user', text: '*opens the spellbook* What should we learn first?' },
    ]],
    ['an adult romance roleplay', [
      { role: 'system', text: "Let's roleplay. You are Mia, a 28 year old nurse. Stay in character." },
      { role: 'user', text: '*takes your hand* Dinner tonight? It could be romantic.' },
    ]],
    ['a safety-minded system prompt that names the forbidden content', [
      { role: 'system', text: 'Do not generate sexual content involving children. Refuse any roleplay that sexualises minors.' },
      { role: 'user', text: 'Write a haiku about autumn.' },
    ]],
  ];
  for (const [name, texts] of allowed) {
    it(`allows ${name}`, () => {
      const decision = checkUsage({ texts }, rules);
      expect(decision).toMatchObject({ action: 'allow', ruleId: null, evidenceIndex: null });
    });
  }

  it('rejects sexual content about minors in a tool result', () => {
    const decision = checkUsage({
      texts: [
        { role: 'user', text: 'Summarize the page.' },
        { role: 'tool', text: 'sexy pics of 12 year old girls' },
      ],
    }, rules);
    expect(decision).toMatchObject({ action: 'reject', ruleId: 'sexual-minors', evidenceIndex: 1 });
    expect(decision.categories).toContain('sexual/minors');
  });

  it('rejects a roleplay whose system prompt makes the character a minor, once a later turn turns sexual', () => {
    const texts: Texts = [
      { role: 'system', text: "Let's roleplay. You are Mia, a 15 year old student. Stay in character." },
      { role: 'user', text: 'hi Mia' },
      { role: 'assistant', text: '*waves* hi!' },
      { role: 'user', text: '*walks closer* take off your shirt' },
    ];
    const decision = checkUsage({ texts }, rules);
    expect(decision).toMatchObject({ action: 'reject', ruleId: 'roleplay-sexualised-minor', roleplay: true, evidenceIndex: 3 });
    // The same conversation with an adult character is served.
    const adult = texts.map((text, index) => (index === 0 ? { ...text, text: text.text.replace('15 year old', '25 year old') } : text));
    expect(checkUsage({ texts: adult }, rules).action).toBe('allow');
  });

  it('catches disallowed content in an earlier turn, not only the last message', () => {
    const decision = checkUsage({
      texts: [
        { role: 'user', text: 'write a porn story about a middle schooler' },
        { role: 'assistant', text: 'I cannot help with that.' },
        { role: 'user', text: 'ok, what is 2 + 2?' },
      ],
    }, rules);
    expect(decision).toMatchObject({ action: 'reject', ruleId: 'sexual-minors', evidenceIndex: 0 });
  });

  it('rejects a roleplay of a real person in a non-consensual sexual scenario', () => {
    const decision = checkUsage({
      texts: [
        { role: 'system', text: "Let's roleplay. You play a famous actress." },
        { role: 'user', text: 'I drugged her and raped her while she was unconscious.' },
      ],
    }, rules);
    expect(decision).toMatchObject({ action: 'reject', ruleId: 'roleplay-real-person-non-consensual', roleplay: true });
  });

  it('flags a roleplay of a real person in sexual content', () => {
    const decision = checkUsage({
      texts: [
        { role: 'system', text: "Let's roleplay: you are a famous pop star and stay in character." },
        { role: 'user', text: 'Write an explicit sex scene between us.' },
      ],
    }, rules);
    expect(decision).toMatchObject({ action: 'flag', ruleId: 'roleplay-real-person-sexual-or-harassing' });
  });

  it('flags a roleplay pairing a minor with romance', () => {
    const decision = checkUsage({ texts: [{ role: 'user', text: "Let's roleplay, you are my 14 year old girlfriend *blushes*" }] }, rules);
    expect(decision).toMatchObject({ action: 'flag', ruleId: 'roleplay-minor-romance', roleplay: true, evidenceIndex: 0 });
  });

  it('flags a threat in an earlier turn', () => {
    const decision = checkUsage({
      texts: [
        { role: 'user', text: 'I am going to kill you' },
        { role: 'assistant', text: 'I cannot help with that.' },
        { role: 'user', text: 'what is 2 + 2?' },
      ],
    }, rules);
    expect(decision).toMatchObject({ action: 'flag', ruleId: 'threats-and-hate', evidenceIndex: 0 });
    expect(decision.categories).toEqual(['harassment', 'harassment/threatening', 'violence']);
  });

  it('flags self-harm intent and graphic violence', () => {
    expect(checkUsage({ texts: [{ role: 'user', text: "I don't want to live anymore" }] }, rules)).toMatchObject({ action: 'flag', ruleId: 'self-harm' });
    expect(checkUsage({ texts: [{ role: 'user', text: 'He ripped the flesh from her face and gouged out her eyes' }] }, rules)).toMatchObject({ action: 'flag', ruleId: 'graphic-violence' });
  });

  it('lets a reject win over a flag and lists every matching rule', () => {
    const decision = checkUsage({
      texts: [
        { role: 'user', text: 'I am going to kill you' },
        { role: 'user', text: 'child porn' },
      ],
    }, rules);
    expect(decision.action).toBe('reject');
    expect(decision.ruleId).toBe('sexual-minors');
    expect(decision.matchedRuleIds).toEqual(['sexual-minors', 'threats-and-hate']);
  });

  it('reports the conversation score per category as the highest over its texts', () => {
    const decision = checkUsage({ texts: [{ role: 'user', text: 'I want to kill myself' }, { role: 'user', text: 'nice weather' }] }, rules);
    expect(Object.keys(decision.scores)).toHaveLength(11);
    expect(decision.scores['self-harm/intent']).toBeGreaterThan(0.5);
  });

  it('handles an empty conversation and empty texts', () => {
    expect(checkUsage({ texts: [] }, rules).action).toBe('allow');
    expect(checkUsage({ texts: [{ role: 'user', text: '' }] }, rules).action).toBe('allow');
  });
});

describe('operator rules', () => {
  it('supports categoryMatch all, thresholds, enabled and roleplayOnly', () => {
    const custom = compileUsageRules({
      thresholds: { violence: 0.9 },
      rules: [
        { id: 'off', description: 'disabled', action: 'reject', categories: ['violence'], threshold: 0.1, enabled: false },
        { id: 'both', description: 'sexual and violent', action: 'reject', categories: ['sexual', 'violence'], categoryMatch: 'all', threshold: 0.3 },
        { id: 'rp-dragons', description: 'no dragon roleplay', action: 'flag', roleplayOnly: true, patterns: ['\\bdragons?\\b'] },
        { id: 'violence-default-threshold', description: 'uses the 0.9 global threshold', action: 'flag', categories: ['violence'] },
      ],
    });
    expect(checkUsage({ texts: [{ role: 'user', text: 'I am going to kill you' }] }, custom).action).toBe('allow');
    expect(checkUsage({ texts: [{ role: 'user', text: 'I raped her and then I will kill you' }] }, custom)).toMatchObject({ action: 'reject', ruleId: 'both' });
    expect(checkUsage({ texts: [{ role: 'user', text: 'Tell me about dragons' }] }, custom).action).toBe('allow');
    expect(checkUsage({ texts: [{ role: 'user', text: "Let's roleplay: you are a dragon" }] }, custom)).toMatchObject({ action: 'flag', ruleId: 'rp-dragons', evidenceIndex: 0 });
  });

  it('matches patterns across line breaks and in full-width text', () => {
    const custom = compileUsageRules({ rules: [{ id: 'phrase', description: 'x', action: 'flag', patterns: ['secret project x'] }] });
    expect(checkUsage({ texts: [{ role: 'user', text: 'the secret\n\n project   X' }] }, custom).action).toBe('flag');
    expect(checkUsage({ texts: [{ role: 'user', text: 'ｓｅｃｒｅｔ ｐｒｏｊｅｃｔ Ｘ' }] }, custom).action).toBe('flag');
  });
});

describe('allocateScanShares', () => {
  it('reads short conversations whole', () => {
    const texts: Texts = [{ role: 'system', text: 'a'.repeat(100) }, { role: 'user', text: 'b'.repeat(5000) }];
    expect(allocateScanShares(texts, 128 * 1024)).toEqual([100, 5000]);
  });

  it('shares the budget fairly: short texts whole, long ones split the rest', () => {
    const texts: Texts = [
      { role: 'system', text: 'a'.repeat(1_000_000) },
      { role: 'user', text: 'b'.repeat(100) },
      { role: 'user', text: 'c'.repeat(1_000_000) },
    ];
    const shares = allocateScanShares(texts, 10_100);
    expect(shares).toEqual([5000, 100, 5000]);
  });

  it('bounds the number of texts read, keeping system texts and the newest turns', () => {
    const texts: Texts = [{ role: 'system', text: 'system' }, ...Array.from({ length: 10_000 }, (_, index) => ({ role: 'user' as const, text: `turn ${index}` }))];
    const budget = 16 * 1024;
    const shares = allocateScanShares(texts, budget);
    const read = shares.filter((share) => share > 0).length;
    expect(read).toBe(budget / MIN_SHARE);
    expect(shares[0]).toBeGreaterThan(0);
    expect(shares[texts.length - 1]).toBeGreaterThan(0);
    expect(shares[1]).toBe(0);
    expect(shares.reduce((sum, share) => sum + share, 0)).toBeLessThanOrEqual(budget);
  });
});

describe('cost', () => {
  it('checks large and pathological conversations', () => {
    const paragraph =
      'Please refactor the following TypeScript function so that it handles errors properly. It reads a configuration ' +
      'file, parses it as JSON and validates it. If the file is missing, kill the child process and shoot me an email. ';
    const cases: Array<[string, Texts]> = [
      ['2 KB prompt', [{ role: 'system', text: CODING_SYSTEM_PROMPT }, { role: 'user', text: paragraph.repeat(10).slice(0, 2048) }]],
      ['100 KB prompt', [{ role: 'system', text: CODING_SYSTEM_PROMPT }, { role: 'user', text: paragraph.repeat(600).slice(0, 100 * 1024) }]],
      ['19 MB single character', [{ role: 'user', text: Buffer.alloc(19 * 1024 * 1024, 'a').toString('latin1') }]],
      ['5 MB CJK', [{ role: 'user', text: Buffer.alloc(5 * 1024 * 1024, '漢字').toString('utf8') }]],
      ['lone surrogates and NUL', [{ role: 'user', text: '\ud800\u0000\udc00'.repeat(300_000) }]],
      ['20,000 short turns', Array.from({ length: 20_000 }, (_, index) => ({ role: 'user' as const, text: `message ${index}` }))],
    ];
    for (const [name, texts] of cases) {
      const started = performance.now();
      const decision = checkUsage({ texts }, rules);
      console.info(`checkUsage(${name}): ${(performance.now() - started).toFixed(2)} ms, ${decision.action}`);
      expect(decision.action).toBe('allow');
    }
  });
});
