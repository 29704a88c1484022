/**
 * The moderation classifier's lexicon: word sets and weighted signals, per category. The data
 * is `classifier-lexicon.json` beside this file (read once, checked against the schema below);
 * this module documents it and hands it to the classifier.
 *
 * The file holds `negationFactor`, `negationWords`, `prohibitionWords`, `wordSets` (name →
 * normalized words), `hashedSets` (name → fingerprints), `signals` (in order), and notes on
 * some sets (`wordSetNotes`, `hashedSetNotes`) and signals (`note`: examples of what they
 * catch), which the classifier does not read.
 *
 * ## How to read a signal
 *
 * A signal is a phrase pattern over normalized tokens (see `scan-text.ts`: lower case, no
 * apostrophes, leetspeak undone, so "I'm" is `im` and "don't" is `dont`), with a weight per
 * category. Pattern language, one item per space-separated word:
 *
 * | item | meaning |
 * | --- | --- |
 * | `kill` | that token |
 * | `a\|b\|c` | any of the alternatives (alternatives may be any of the forms here) |
 * | `$NAME` | any word of the word set `NAME` |
 * | `%NAME` | any token whose `hashTerm` fingerprint is in the hashed set `NAME` |
 * | `item?` | optional slot |
 * | `~N` | up to N arbitrary tokens may come before the next slot |
 * | `^item` | the anchor: the slot looked up in the index (default: the first slot); pick the rarest |
 *
 * Options: `unlessNext` (a slot: the match does not count when one of the three tokens after it,
 * in the same sentence, matches, e.g. "kill the *process*"), `unlessPrevious` (same for the two
 * tokens before),
 * `negatable: false` (the phrase carries its own negation, as in "don't want to live"), `tag`
 * (the match also marks its anchor position with a tag for `near` signals), and `near`:
 * `[tagA, tagB]` within `within` tokens in either order (how "minor" and "sexual" terms combine).
 *
 * ## How weights combine
 *
 * Each signal counts once per text, at its strongest occurrence. A category's score is
 * `1 - Π(1 - w × d)` over the distinct signals that matched it, where `d` is 1, or
 * `NEGATION_FACTOR` (0.25) when a negation ("not", "never", "don't", "refuse", ...) sits in the
 * match or the three tokens before it, or a prohibition word ("prohibited", "forbidden", ...)
 * in the four after, within the sentence. Single ambiguous words ("kill", "shoot", "sex") weigh 0.05–0.3 so that
 * ordinary text never reaches a threshold on them, even several together; the scores that
 * flag come from phrases that only a harmful sentence makes (first person + harm verb + a
 * person as object, a group + a dehumanizing predicate, first person + self-harm, ...).
 *
 * ## What flags each category, and why
 *
 * | category | flags on (weight) | stays quiet on |
 * | --- | --- | --- |
 * | violence | first person + harm verb + a person ("I'll stab him", 0.75–0.8); attacks on places, bomb making, "to death" (0.6–0.75) | "kill the process", "shoot me an email", games, plots (single words 0.05–0.3) |
 * | violence/graphic | gore nouns + gore verbs, severed/skinned/gouged, "in graphic detail" near a violent word (0.45–0.65) | "blood test", "torn ACL" |
 * | harassment | "you" + insult, "fuck off", death wishes, "kill yourself" (0.5–0.8) | insult words alone (0.06–0.35) |
 * | harassment/threatening | threats aimed at "you" (0.6–0.85), "I know where you live" (0.65) | apologies ("sorry I hurt you"), "I would never…" (negated ×0.25) |
 * | hate | group + "are" + dehumanizing word (0.8), calls to exterminate or strip rights (0.7–0.85), slurs (0.55) | group names in neutral sentences |
 * | hate/threatening | extermination of a group (0.85) | |
 * | self-harm | first person + self-harm phrase (0.75–0.9), self-harm words (0.2–0.4) | "suicide prevention hotline", a friend's distress |
 * | self-harm/intent | "I want to die", "kill myself", "don't want to live" (0.75–0.9) | "dying to see" |
 * | self-harm/instructions | method words + self-harm phrase, pill counts + death (0.75–0.85) | "lethal dose" alone (0.3) |
 * | sexual | explicit acts and requests (0.45–0.75) | anatomy, "sex: male", sex education (0.12–0.2) |
 * | sexual/minors | a minor term within 12 tokens of an explicit sexual term (0.9); teen + explicit (0.45) | nudity or "sex education" near a child (0.3 or less) |
 *
 * ## Sensitive terms
 *
 * Slurs are not spelled out: the `%SLURS…` sets hold `hashTerm` fingerprints of the
 * normalized words (widely recognized ethnic, racial, religious, homophobic, transphobic and
 * ableist slurs, with plurals). To check whether a word is in a set, compute
 * `hashTerm(normalizeToken(word)).toString(16).padStart(13, '0')`.
 *
 * English only. Known blind spots: other languages, homoglyphs (Cyrillic "а" for Latin "a"),
 * letters spaced out ("k i l l"), sarcasm and fiction framing, and anything the phrases
 * do not anticipate. It is a heuristic for an offline provider and a cheap pre-check, not a
 * substitute for a trained model.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { projectPath } from '../project-root.js';
import { MODERATION_CATEGORIES, type ModerationCategory } from './moderation-categories.js';

/** Weights of one signal, by category. */
export type CategoryWeights = Partial<Record<ModerationCategory, number>>;

const weightsSchema = z.partialRecord(z.enum(MODERATION_CATEGORIES), z.number().min(0).max(1));

/** One lexicon signal (see the module comment for the pattern language). */
const signalSchema = z.strictObject({
  id: z.string().min(1),
  /** Examples of what the signal catches, for readers; not used. */
  note: z.string().optional(),
  pattern: z.string().min(1).optional(),
  near: z.tuple([z.string(), z.string()]).readonly().optional(),
  within: z.number().int().positive().optional(),
  scores: weightsSchema.optional(),
  tag: z.string().optional(),
  negatable: z.boolean().optional(),
  unlessNext: z.string().optional(),
  unlessPrevious: z.string().optional(),
});
export type SignalSpec = z.infer<typeof signalSchema>;

const lexiconFileSchema = z.strictObject({
  negationFactor: z.number().min(0).max(1),
  negationWords: z.array(z.string().min(1)),
  prohibitionWords: z.array(z.string().min(1)),
  wordSets: z.record(z.string(), z.array(z.string().min(1))),
  wordSetNotes: z.record(z.string(), z.string()),
  hashedSets: z.record(z.string(), z.array(z.string().regex(/^[0-9a-f]{13}$/))),
  hashedSetNotes: z.record(z.string(), z.string()),
  signals: z.array(signalSchema),
});

/** Where the lexicon is kept, from the project root (found from this module, so a compiled copy reads the same file). */
export const LEXICON_FILE = projectPath('server', 'classifier', 'classifier-lexicon.json');

const lexicon = lexiconFileSchema.parse(JSON.parse(readFileSync(LEXICON_FILE, 'utf8')));

/** Multiplier applied to a negated match. */
export const NEGATION_FACTOR: number = lexicon.negationFactor;

/** Tokens that negate a match when they sit in it or in the three tokens before it. */
export const NEGATION_WORDS: readonly string[] = lexicon.negationWords;

/** Tokens that negate a match when they sit in the four tokens after it ("... is prohibited"). */
export const PROHIBITION_WORDS: readonly string[] = lexicon.prohibitionWords;

/** Named word sets used by the patterns (`$NAME`). Every word is in normalized token form (a test checks). */
export const WORD_SETS: Readonly<Record<string, readonly string[]>> = lexicon.wordSets;

/** Hashed sets (`%NAME`): `hashTerm` fingerprints of normalized words, 13 hex digits each. */
export const HASHED_SETS: Readonly<Record<string, readonly string[]>> = lexicon.hashedSets;

/**
 * The signals, in order. Weights: 0.05–0.3 for a single word that is usually innocent, 0.3–0.55
 * for a word or phrase that is usually but not always what it seems, 0.6–0.9 for a phrase that is.
 */
export const SIGNALS: readonly SignalSpec[] = lexicon.signals;
