/**
 * Roleplay detection for the restricted family's usage checks (SPEC: "restrictions on certain
 * roleplay content"). It answers one question, "is this conversation a roleplay?", so that
 * usage rules can require it (`roleplayOnly`); on its own it never flags anything.
 *
 * Each cue below has a weight; a conversation is a roleplay when the weights of the distinct
 * cues found in any of its texts add up to at least {@link ROLEPLAY_THRESHOLD}. Strong cues
 * (weight 1) decide alone; weak ones need company, so that "act as a senior engineer" or
 * "You are Claude, a helpful assistant" alone does not make a coding session a roleplay.
 *
 * | cue | weight | example |
 * | --- | --- | --- |
 * | `invitation` | 1 | "let's roleplay", "can we do an RP", "wanna role-play" |
 * | `roleplay-as` | 1 | "roleplay as a pirate", "you are roleplaying", "roleplaying with me" |
 * | `stay-in-character` | 1 | "stay in character", "never break character" |
 * | `out-of-character` | 1 | "OOC:", "((ooc" |
 * | `character-card` | 1 | `{{char}}`, `{{user}}`, `<START>` |
 * | `card-fields` | 1 | two of "Personality:", "Scenario:", "First message:", "Example dialogue:", "Character name:" |
 * | `companion` | 1 | "you are my girlfriend", "you will play my loving wife" |
 * | `action-markers` | 1 | two or more `*smiles softly*` style actions (lower-case verb first) |
 * | `action-marker` | 0.5 | one such action |
 * | `play-the-role` | 0.6 | "play the role of", "act the part of", "pretend to be", "pretend you're" |
 * | `named-persona` | 0.6 | "You are Lily, a ..." (a capitalised name right after "you are") |
 * | `in-character` | 0.5 | "in character", "in-character" |
 * | `persona` | 0.4 | "act as my ...", "respond as if you were a ..." |
 *
 * Every expression has bounded repetition only and runs on the same bounded sample of each text
 * as the classifier, so the cost is linear and small.
 */

/** Summed cue weight at which a conversation counts as a roleplay. */
export const ROLEPLAY_THRESHOLD = 1;

interface RoleplayCue {
  id: string;
  weight: number;
  pattern: RegExp;
  /** Matches needed for the cue to count (default 1). */
  minimumMatches?: number;
  /**
   * Lower-case substrings of which at least one must occur for the pattern to be worth running:
   * `includes` skips most texts far faster than a leading alternation can.
   */
  hints?: readonly string[];
}

const ROLEPLAY_CUES: readonly RoleplayCue[] = [
  {
    id: 'invitation',
    weight: 1,
    pattern: /\b(?:let'?s|let us|wanna|want to|we'?ll|we will|can we|could we|shall we|would you like to|i want you to)\s+(?:do\s+(?:a|an|some)\s+)?(?:role[\s-]?play|rp)\b/i,
    hints: ['role', ' rp'],
  },
  { id: 'roleplay-as', weight: 1, hints: ['role', 'rp '], pattern: /\b(?:role[\s-]?play(?:ing)?|rp)\s+(?:as|with me|a scene|scenario)\b|\byou(?:'re| are)\s+(?:now\s+)?role[\s-]?playing\b/i },
  { id: 'stay-in-character', weight: 1, hints: ['character'], pattern: /\b(?:stay|remain|keep|never break|don'?t break|do not break|without breaking|always stay)\s+(?:in\s+)?character\b/i },
  { id: 'out-of-character', weight: 1, hints: ['ooc'], pattern: /\(\(\s*ooc\b|\booc\s*:|\[\s*ooc\b/i },
  { id: 'character-card', weight: 1, hints: ['{{', '<start>'], pattern: /\{\{\s*(?:char|user)\s*\}\}|<START>/i },
  {
    id: 'card-fields',
    weight: 1,
    pattern: /(?:^|\n)\s*(?:personality|scenario|first[ _]mes(?:sage)?|example[ _]dialogue|mes_example|char(?:acter)?[ _]name|appearance|backstory)\s*:/gi,
    minimumMatches: 2,
    hints: ['personality', 'scenario', 'first', 'example', 'mes_example', 'char', 'appearance', 'backstory'],
  },
  {
    id: 'companion',
    hints: ['you'],
    weight: 1,
    pattern: /\byou(?:'re| are| will be| will play| play)\s+(?:now\s+)?(?:my|the)\s+(?:\S{1,20}\s){0,3}?(?:girlfriend|boyfriend|wife|husband|lover|mistress|waifu|husbando|crush|fianc[eé]e?|sugar (?:daddy|mommy)|submissive|dom|domme)\b/i,
  },
  // Lower-case first letter on purpose: markdown emphasis ("*Returns*", "*Note*") is usually capitalised.
  { id: 'action-markers', weight: 1, hints: ['*'], pattern: /(?<![*\w])\*[a-z][a-z']{1,20}(?:s|ed|ing)\b[^*\n]{0,80}\*(?![*\w])/g, minimumMatches: 2 },
  { id: 'action-marker', weight: 0.5, hints: ['*'], pattern: /(?<![*\w])\*[a-z][a-z']{1,20}(?:s|ed|ing)\b[^*\n]{0,80}\*(?![*\w])/ },
  { id: 'play-the-role', weight: 0.6, hints: ['role', 'part', 'persona', 'pretend'], pattern: /\b(?:play|act|take on|assume)\s+(?:the\s+)?(?:role|part|persona)\s+of\b|\bpretend\s+(?:to\s+be|you(?:'re| are))\b/i },
  // Without the `u` flag on purpose (V8 runs it far slower); the name may be any 2-21 non-space characters.
  { id: 'named-persona', weight: 0.6, hints: ['you are'], pattern: /\b[Yy]ou are\s+(?![Aa]n?\b|[Tt]he\b|[Nn]ow\b|[Nn]ot\b)[A-Z][^\s,]{1,20},\s+(?:a|an|the)\b/ },
  { id: 'in-character', weight: 0.5, hints: ['character'], pattern: /\bin[\s-]character\b/i },
  { id: 'persona', weight: 0.4, hints: ['as', 'like'], pattern: /\b(?:act|behave|respond|reply|talk|speak)\s+(?:as|like)\s+(?:if\s+you\s+(?:are|were)\s+)?(?:my|a|an)\b/i },
];

/** What {@link detectRoleplayCues} found in one text. */
export interface RoleplayEvidence {
  /** Ids of the cues found. */
  cues: string[];
  /** Sum of their weights. */
  score: number;
}

function countMatches(pattern: RegExp, text: string, enough: number): number {
  if (!pattern.global) return pattern.test(text) ? 1 : 0;
  pattern.lastIndex = 0;
  let count = 0;
  while (count < enough && pattern.exec(text) !== null) count++;
  pattern.lastIndex = 0;
  return count;
}

/** The roleplay cues in one (already bounded) piece of text. */
export function detectRoleplayCues(text: string): RoleplayEvidence {
  const cues: string[] = [];
  let score = 0;
  const lower = text.toLowerCase();
  for (const cue of ROLEPLAY_CUES) {
    if (cue.hints !== undefined && !cue.hints.some((hint) => lower.includes(hint))) continue;
    // Two action markers already count; the single-marker cue would count the same evidence twice.
    if (cue.id === 'action-marker' && cues.includes('action-markers')) continue;
    const needed = cue.minimumMatches ?? 1;
    if (countMatches(cue.pattern, text, needed) >= needed) {
      cues.push(cue.id);
      score += cue.weight;
    }
  }
  return { cues, score };
}

/** Merges the cues of several texts: each cue counts once for the whole conversation. */
export function combineRoleplayEvidence(pieces: readonly RoleplayEvidence[]): RoleplayEvidence & { roleplay: boolean } {
  const found = new Set<string>();
  for (const piece of pieces) for (const cue of piece.cues) found.add(cue);
  // A single action marker in two texts is the same evidence as two markers in one.
  const markerTexts = pieces.filter((piece) => piece.cues.includes('action-marker')).length;
  if (markerTexts >= 2) found.add('action-markers');
  if (found.has('action-markers')) found.delete('action-marker');
  let score = 0;
  for (const cue of ROLEPLAY_CUES) if (found.has(cue.id)) score += cue.weight;
  const cues = ROLEPLAY_CUES.filter((cue) => found.has(cue.id)).map((cue) => cue.id);
  return { cues, score, roleplay: score >= ROLEPLAY_THRESHOLD };
}
