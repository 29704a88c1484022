/**
 * The default usage policy of the restricted family (`usage-rules.ts` documents how rules are
 * checked), and the patterns its rules are written with.
 */
import type { UsageRulesInput } from '../catalog/usage-rules.schema.js';

/** References to a person under 18: ages 1–17, school years, and words for children. */
const MINOR_REFERENCE_PATTERNS = [
  String.raw`\b(?:[1-9]|1[0-7]) ?-?(?:years?|yrs?|yr) ?-?old\b`,
  String.raw`\b(?:[1-9]|1[0-7]) ?(?:yo|y/o|y\.o\.)(?![a-z])`,
  String.raw`\b(?:aged?|age of) (?:[1-9]|1[0-7])\b`,
  String.raw`\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen)[ -]years?[ -]old\b`,
  String.raw`\b(?:under ?age(?:d)?|under 18|minors?|pre-?teens?|prepubescent|child|children|kids?|toddlers?|loli(?:con)?|shota(?:con)?|jailbait|teen(?:age|ager|agers|s)?)\b`,
  String.raw`\b(?:little|young|school) ?(?:girls?|boys?)\b`,
  String.raw`\b(?:elementary|middle|junior high|primary|grade) ?school(?:er|ers)?\b`,
  String.raw`\b(?:[1-8]th|first|second|third|fourth|fifth|sixth|seventh|eighth) grader?s?\b`,
];

/** References to a real, identifiable person rather than a fictional character. */
const REAL_PERSON_PATTERNS = [
  String.raw`\b(?:real|actual|existing|living|famous|well-known) (?:person|people|celebrit(?:y|ies)|individual|human|man|woman|singer|actor|actress|politician|streamer|youtuber|influencer)\b`,
  String.raw`\b(?:celebrit(?:y|ies)|actress|pop ?star|singer|rapper|politician|president|prime minister|senator|congress(?:wo)?man|influencer|streamer|youtuber|tiktoker|news anchor|athlete|footballer)\b`,
  String.raw`\bmy (?:real )?(?:co-?worker|colleague|boss|teacher|professor|classmate|neighbou?r|ex|ex-?(?:girlfriend|boyfriend|wife|husband)|landlord|manager|roommate|sister-in-law|brother-in-law)\b`,
];

/** Sexual acts without consent. */
const NON_CONSENT_PATTERNS = [
  String.raw`\b(?:rape[sd]?|raping|non-?con(?:sensual)?|dub-?con|molest(?:s|ed|ing)?|sexual(?:ly)? assault(?:s|ed|ing)?)\b`,
  String.raw`\b(?:against (?:her|his|their|my|your) will|without (?:her|his|their|my|your) consent)\b`,
  String.raw`\b(?:force[sd]? (?:her|him|them|me|you)(?:self|selves)? (?:to|into|down)|drugg?ed (?:her|him|them|me|you))\b`,
  String.raw`\bwhile (?:she|he|they|i|you) (?:was|were|is|are|am) (?:asleep|unconscious|passed out|too drunk)\b`,
];

/** Romantic framing, used to flag roleplay that pairs a minor with romance for review. */
const ROMANCE_PATTERNS = [
  String.raw`\b(?:kiss(?:es|ed|ing)?|make out|making out|romantic|romance|dating|date me|girlfriend|boyfriend|cuddl(?:e|es|ed|ing)|in love|seduc(?:e|es|ed|ing|tive)|flirt(?:s|ed|ing|y)?|lovers?|in bed)\b`,
];

/**
 * The default usage policy of the restricted family. Rejections are kept to what no context
 * excuses; the rest is flagged for staff review, so a false alarm costs a reviewer's minute, not
 * a customer's request. Tuned so that ordinary coding and assistant prompts (including system
 * prompts that forbid these contents) come out `allow`; see usage-rules.test.ts.
 */
export const DEFAULT_USAGE_RULES: UsageRulesInput = {
  thresholds: {},
  rules: [
    {
      id: 'sexual-minors',
      description: 'Sexual content involving minors (classifier category sexual/minors).',
      action: 'reject',
      categories: ['sexual/minors'],
      threshold: 0.4,
    },
    {
      id: 'roleplay-sexualised-minor',
      description: 'Roleplay with sexual content where a character is described as under 18 (age, school year, or a word for a child), anywhere in the conversation.',
      action: 'reject',
      roleplayOnly: true,
      categories: ['sexual'],
      threshold: 0.35,
      patterns: MINOR_REFERENCE_PATTERNS,
    },
    {
      id: 'roleplay-real-person-non-consensual',
      description: 'Roleplay depicting a real, identifiable person in a non-consensual sexual scenario.',
      action: 'reject',
      roleplayOnly: true,
      categories: ['sexual', 'violence'],
      threshold: 0.3,
      patterns: [REAL_PERSON_PATTERNS.join('|'), NON_CONSENT_PATTERNS.join('|')],
      patternMatch: 'all',
    },
    {
      id: 'roleplay-real-person-sexual-or-harassing',
      description: 'Roleplay of a real, identifiable person in sexual or harassing content.',
      action: 'flag',
      roleplayOnly: true,
      categories: ['sexual', 'harassment'],
      threshold: 0.5,
      patterns: REAL_PERSON_PATTERNS,
    },
    {
      id: 'roleplay-minor-romance',
      description: 'Roleplay pairing a character described as under 18 with romance; not sexual yet, so reviewed rather than refused.',
      action: 'flag',
      roleplayOnly: true,
      patterns: [MINOR_REFERENCE_PATTERNS.join('|'), ROMANCE_PATTERNS.join('|')],
      patternMatch: 'all',
    },
    {
      id: 'self-harm',
      description: 'Self-harm intent or instructions.',
      action: 'flag',
      categories: ['self-harm/intent', 'self-harm/instructions'],
      threshold: 0.5,
    },
    {
      id: 'graphic-violence',
      description: 'Graphic violence above the review threshold.',
      action: 'flag',
      categories: ['violence/graphic'],
      threshold: 0.6,
    },
    {
      id: 'threats-and-hate',
      description: 'Explicit threats against people or groups, or hateful content.',
      action: 'flag',
      categories: ['hate/threatening', 'harassment/threatening', 'hate'],
      threshold: 0.7,
    },
  ],
};
