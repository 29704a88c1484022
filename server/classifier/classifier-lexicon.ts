/**
 * The moderation classifier's lexicon: word sets and weighted signals, per category.
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
 * | `$NAME` | any word of the set `NAME` below |
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
 * letters spaced out ("k i l l"), sarcasm and fiction framing, and anything the phrases below
 * do not anticipate. It is a heuristic for an offline provider and a cheap pre-check, not a
 * substitute for a trained model.
 */
import type { ModerationCategory } from './moderation-categories.js';

/** Weights of one signal, by category. */
export type CategoryWeights = Partial<Record<ModerationCategory, number>>;

/** One lexicon signal (see the module comment for the pattern language). */
export interface SignalSpec {
  id: string;
  pattern?: string;
  near?: readonly [string, string];
  within?: number;
  scores?: CategoryWeights;
  tag?: string;
  negatable?: boolean;
  unlessNext?: string;
  unlessPrevious?: string;
}

/** Multiplier applied to a negated match. */
export const NEGATION_FACTOR = 0.25;

/** Tokens that negate a match when they sit in it or in the three tokens before it. */
export const NEGATION_WORDS: readonly string[] = [
  'not', 'never', 'no', 'dont', 'doesnt', 'didnt', 'wont', 'wouldnt', 'cant', 'cannot', 'couldnt', 'shouldnt', 'mustnt',
  'isnt', 'arent', 'wasnt', 'nor', 'without', 'avoid', 'avoiding', 'refuse', 'refuses', 'refusing', 'decline', 'declines',
  'prevent', 'preventing', 'stop', 'against', 'nothing',
];

/** Tokens that negate a match when they sit in the four tokens after it ("... is prohibited"). */
export const PROHIBITION_WORDS: readonly string[] = [
  'prohibited', 'forbidden', 'banned', 'disallowed', 'unacceptable', 'illegal', 'unlawful', 'notallowed',
];

const UNDER_18_NUMBERS = Array.from({ length: 17 }, (_, index) => String(index + 1));
const UNDER_18_WORDS = [
  'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen',
  'fourteen', 'fifteen', 'sixteen', 'seventeen',
];
const AGE_SUFFIXES = ['yo', 'yr', 'yrs', 'y'];

/** Named word sets used by the patterns. Every word is in normalized token form (a test checks). */
export const WORD_SETS: Record<string, readonly string[]> = {
  // --- people and grammar -------------------------------------------------------------------
  SUBJECT_FIRST: ['i', 'im', 'ill', 'id', 'ive', 'we', 'were', 'weve', 'imma', 'ima', 'gonna', 'finna', 'wanna'],
  MODAL: [
    'am', 'will', 'would', 'shall', 'should', 'gonna', 'going', 'to', 'want', 'wanna', 'gotta', 'got', 'need', 'have',
    'literally', 'really', 'just', 'actually', 'seriously', 'definitely', 'totally', 'fucking', 'swear', 'so', 'finna',
    'about', 'plan', 'planning', 'intend', 'gon', 'come', 'and', 'go', 'can', 'could', 'might', 'may', 'must', 'dont',
    'never', 'wont', 'wouldnt', 'not', 'cant', 'also', 'still', 'then', 'eventually', 'personally', 'like', 'love',
    'ready', 'try', 'trying', 'make', 'sure', 'gladly', 'happily', 'slowly', 'soon',
  ],
  TARGET_SECOND: ['you', 'u', 'ya', 'yu', 'yall', 'your', 'ur', 'thee', 'yourselves'],
  TARGET_THIRD: ['him', 'her', 'them', 'everyone', 'everybody', 'people', 'someone', 'somebody', 'his', 'their'],
  QUANTIFIER: ['all', 'both', 'each', 'every', 'of'],
  HUMAN_NOUN: [
    'someone', 'somebody', 'people', 'person', 'man', 'woman', 'him', 'her', 'them', 'human', 'humans', 'wife', 'husband',
    'boss', 'neighbor', 'neighbour', 'child', 'kid', 'baby', 'family', 'cop', 'police', 'officer', 'president',
    'teacher', 'classmate', 'girlfriend', 'boyfriend', 'parents', 'mother', 'father', 'mom', 'dad', 'brother', 'sister',
    'guy', 'girl', 'coworker', 'ex', 'witness', 'victim', 'everyone', 'politician', 'senator',
  ],
  DETERMINER: ['a', 'an', 'the', 'my', 'your', 'his', 'her', 'their', 'our', 'this', 'that', 'some'],
  SELF: ['myself', 'meself', 'yourself', 'urself', 'oneself', 'themselves', 'themself', 'herself', 'himself'],
  MYSELF: ['myself', 'meself'],
  PERSONAL_POSSESSIVE: ['my', 'your', 'ur', 'his', 'her', 'their', 'our'],
  // --- benign contexts ----------------------------------------------------------------------
  /** What follows "kill", "shoot", "execute", "child" in technical or idiomatic use. */
  TECHNICAL_NOUN: [
    'process', 'processes', 'proc', 'pid', 'pids', 'task', 'tasks', 'job', 'jobs', 'thread', 'threads', 'signal', 'command',
    'switch', 'session', 'sessions', 'server', 'servers', 'container', 'containers', 'pod', 'pods', 'worker', 'workers',
    'daemon', 'port', 'app', 'apps', 'application', 'tab', 'tabs', 'window', 'windows', 'program', 'script', 'scripts',
    'service', 'services', 'query', 'queries', 'connection', 'connections', 'instance', 'instances', 'node', 'nodes',
    'element', 'elements', 'component', 'components', 'class', 'classes', 'theme', 'themes', 'table', 'tables', 'widget',
    'widgets', 'key', 'keys', 'span', 'selector', 'branch', 'branches', 'loop', 'bug', 'bugs', 'feature', 'features',
    'light', 'lights', 'engine', 'timer', 'time', 'mood', 'vibe', 'joke', 'buzz', 'weeds', 'germs', 'bacteria',
    'birds', 'code', 'build', 'test', 'tests', 'request', 'requests', 'order', 'orders', 'deal', 'idea', 'plan', 'battery',
    'notification', 'notifications', 'cache', 'terminal', 'shell', 'sql', 'statement', 'function', 'method', 'methods',
    'module', 'modules', 'package', 'packages', 'dependency', 'dependencies', 'directory', 'directories', 'folder', 'file',
    'files', 'object', 'objects', 'array', 'item', 'items', 'row', 'rows', 'record', 'records', 'entity', 'entities',
    'account', 'accounts', 'care', 'support', 'seat', 'safety', 'seats', 'labor', 'labour', 'benefit', 'benefits',
  ],
  /** What follows a threat verb + "you" when it is not a threat ("shoot you an email"). */
  THREAT_BENIGN: [
    'email', 'emails', 'mail', 'message', 'text', 'note', 'dm', 'pm', 'line', 'link', 'invite', 'invitation', 'reminder',
    'update', 'call', 'ping', 'quick', 'slack', 'deal', 'break', 'check', 'piece', 'slice', 'off', 'in', 'loose', 'short',
    'at', 'to', 'game', 'chess', 'race', 'match', 'round', 'some', 'photo', 'picture', 'video', 'copy', 'question',
    'answer', 'request', 'a', 'an', 'with', 'because', 'if',
  ],
  APOLOGY: ['sorry', 'if', 'apologize', 'apologise', 'regret', 'didnt', 'never', 'when', 'whether', 'accidentally'],
  // --- violence -----------------------------------------------------------------------------
  HARM_VERB_STRONG: [
    'kill', 'murder', 'stab', 'shoot', 'strangle', 'behead', 'decapitate', 'butcher', 'slaughter', 'torture', 'slit',
    'lynch', 'execute', 'bury', 'gut', 'end', 'hang', 'drown', 'poison', 'burn', 'shank', 'eliminate', 'massacre',
    'rape', 'skin', 'dismember', 'murk', 'unalive', 'smother', 'suffocate', 'cripple', 'mutilate', 'bomb', 'gun',
  ],
  HARM_VERB_WEAK: ['hurt', 'beat', 'punch', 'cut', 'smash', 'choke', 'attack', 'assault', 'kick', 'slap', 'break', 'harm', 'batter'],
  PLACE_TARGET: [
    'school', 'church', 'mosque', 'synagogue', 'temple', 'mall', 'office', 'building', 'embassy', 'plane', 'train', 'bus',
    'stadium', 'concert', 'hospital', 'airport', 'station', 'parade', 'rally', 'classroom', 'campus', 'clinic',
  ],
  GORE_NOUN: [
    'intestines', 'guts', 'organs', 'brains', 'brain', 'blood', 'viscera', 'entrails', 'bowels', 'innards', 'flesh',
    'skull', 'bones', 'bone', 'eyeball', 'eyeballs', 'limbs', 'gore',
  ],
  GORE_VERB: [
    'spilled', 'spilling', 'spill', 'splattered', 'splatter', 'splattering', 'sprayed', 'spraying', 'gushed', 'gushing',
    'pooled', 'pooling', 'poured', 'pouring', 'oozed', 'oozing', 'everywhere', 'exposed', 'dangling', 'hanging', 'torn',
    'ripped', 'crushed', 'shattered', 'caved', 'cracked', 'leaking', 'spurted', 'spurting', 'squirting', 'dripping',
  ],
  BODY_PART: [
    'flesh', 'skin', 'limbs', 'limb', 'eyes', 'eye', 'throat', 'face', 'head', 'arm', 'arms', 'leg', 'legs', 'fingers',
    'finger', 'tongue', 'teeth', 'jaw', 'scalp', 'nails', 'ears', 'ear', 'heart', 'stomach', 'belly', 'chest',
  ],
  SEVERED_PART: ['head', 'heads', 'limb', 'limbs', 'arm', 'arms', 'leg', 'legs', 'finger', 'fingers', 'hand', 'hands', 'foot', 'feet', 'ear', 'ears', 'tongue', 'genitals'],
  ALIVE_VERB: ['skinned', 'burned', 'burnt', 'boiled', 'flayed', 'eaten', 'dissected', 'roasted'],
  // --- self-harm ----------------------------------------------------------------------------
  SELF_HARM_VERB: ['kill', 'hang', 'shoot', 'cut', 'hurt', 'drown', 'poison', 'starve', 'burn', 'stab', 'off', 'harm', 'end', 'suffocate', 'unalive', 'overdose', 'od'],
  METHOD_WORD: [
    'how', 'what', 'which', 'ways', 'way', 'method', 'methods', 'best', 'easiest', 'quickest', 'fastest', 'painless', 'painlessly', 'guide',
    'steps', 'instructions', 'tips', 'surest', 'effective', 'reliable', 'quick', 'quickly', 'easy',
  ],
  PILLS: [
    'pills', 'tablets', 'paracetamol', 'acetaminophen', 'tylenol', 'ibuprofen', 'insulin', 'xanax', 'benzos',
    'sleeping', 'aspirin', 'opioids', 'oxycodone', 'fentanyl', 'antidepressants', 'mg', 'milligrams',
  ],
  DEATH_WORD: ['die', 'death', 'dead', 'overdose', 'od', 'lethal', 'fatal', 'kill', 'killed'],
  LIVE_WORD: ['live', 'be', 'exist', 'wake', 'go', 'living', 'continue', 'keep', 'carry'],
  SUICIDE_BENIGN: [
    'prevention', 'hotline', 'hotlines', 'helpline', 'lifeline', 'awareness', 'squad', 'rate', 'rates', 'statistics',
    'risk', 'bomber', 'bombers', 'bombing', 'bombings', 'mission', 'missions', 'doors', 'door', 'linux', 'pact', 'crisis',
    'counselor', 'counsellor', 'research', 'support', 'watch', 'attempt', 'survivor', 'survivors', 'screening',
  ],
  // --- sexual -------------------------------------------------------------------------------
  CLOTHING: ['clothes', 'panties', 'bra', 'shirt', 'underwear', 'pants', 'dress', 'knickers', 'top', 'bikini', 'lingerie', 'skirt', 'thong', 'boxers'],
  SEX_BENIGN: [
    'education', 'ed', 'offender', 'offenders', 'chromosome', 'chromosomes', 'ratio', 'determination', 'differences',
    'difference', 'hormone', 'hormones', 'worker', 'workers', 'trafficking', 'male', 'female', 'm', 'f', 'assigned',
    'change', 'reassignment', 'selection', 'linked', 'cells', 'organs', 'discrimination', 'marriage', 'abuse', 'field',
    'column', 'variable', 'distribution', 'specific', 'based', 'characteristics', 'pistols',
  ],
  SEX_ORGAN: ['dick', 'cock', 'pussy', 'clit', 'tits', 'boobs', 'breasts', 'nipples', 'balls', 'penis', 'vagina', 'ass', 'butt', 'crotch', 'thighs', 'cunt'],
  NAKED_NOUN: ['body', 'bodies', 'pics', 'pic', 'photos', 'photo', 'pictures', 'picture', 'images', 'image', 'selfies', 'selfie', 'videos', 'video', 'scene', 'scenes'],
  EXPLICIT_NOUN: ['scene', 'scenes', 'story', 'stories', 'content', 'roleplay', 'rp', 'fantasy', 'fantasies', 'chat', 'details', 'description', 'act', 'acts', 'fanfic', 'fanfiction'],
  // --- minors -------------------------------------------------------------------------------
  MINOR_WORD: [
    'child', 'children', 'kid', 'kids', 'underage', 'preteen', 'preteens', 'prepubescent', 'toddler', 'toddlers',
    'infant', 'infants', 'schoolgirl', 'schoolgirls', 'schoolboy', 'schoolboys', 'loli', 'lolis', 'lolicon', 'shota',
    'shotacon', 'minors', 'juvenile', 'juveniles', 'childs', 'kiddie', 'kiddy', 'pedo', 'pedophile', 'paedophile', 'jailbait',
  ],
  MINOR_WEAK_WORD: ['teen', 'teens', 'teenager', 'teenagers', 'teenage', 'minor', 'young', 'youngster', 'daughter', 'son', 'stepdaughter', 'stepson', 'niece', 'nephew', 'pupil'],
  LITTLE: ['little', 'young', 'small', 'tiny'],
  GIRL_BOY: ['girl', 'girls', 'boy', 'boys'],
  SCHOOL_LEVEL: ['elementary', 'middle', 'primary', 'grade', 'junior'],
  GRADE_ORDINAL: ['1st', '2nd', '3rd', '4th', '5th', '6th', '7th', '8th', '9th', 'first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth'],
  UNDER_18: [...UNDER_18_NUMBERS, ...UNDER_18_WORDS],
  UNDER_18_NUMBER: UNDER_18_NUMBERS,
  UNDER_18_AGE_TOKEN: UNDER_18_NUMBERS.flatMap((age) => AGE_SUFFIXES.map((suffix) => `${age}${suffix}`)),
  YEAR: ['year', 'years', 'yr', 'yrs', 'y'],
  MINOR_BENIGN: [...[
    'process', 'processes', 'node', 'nodes', 'element', 'elements', 'component', 'components', 'class', 'classes', 'theme',
    'table', 'window', 'widget', 'key', 'span', 'task', 'tasks', 'thread', 'threads', 'selector', 'selectors', 'record',
    'records', 'item', 'items', 'entity', 'entities', 'object', 'objects', 'view', 'views', 'route', 'routes', 'row',
    'rows', 'prop', 'props', 'directory', 'directories', 'folder', 'folders', 'module', 'modules', 'tax', 'support',
    'care', 'safety', 'protection', 'labor', 'labour', 'seat', 'seats', 'benefit', 'benefits',
    'bug', 'bugs', 'fix', 'fixes', 'change', 'changes', 'version', 'release', 'issue', 'issues', 'update', 'edit', 'tweak',
    'detail', 'details', 'chord', 'scale', 'league', 'injury', 'injuries', 'improvement', 'refactor',
  ]],
  // --- hate ---------------------------------------------------------------------------------
  GROUP: [
    'jews', 'muslims', 'christians', 'catholics', 'hindus', 'sikhs', 'buddhists', 'blacks', 'whites', 'asians',
    'mexicans', 'latinos', 'hispanics', 'arabs', 'africans', 'immigrants', 'migrants', 'refugees', 'gays', 'lesbians',
    'homosexuals', 'transgenders', 'women', 'chinese', 'indians', 'pakistanis', 'gypsies', 'roma', 'palestinians',
    'israelis', 'mormons', 'bisexuals', 'queers', 'females', 'aboriginals', 'natives', 'russians', 'ukrainians',
    'koreans', 'japanese', 'filipinos', 'somalis', 'nigerians', 'haitians', 'jamaicans', 'turks', 'kurds', 'persians',
    'iranians', 'syrians', 'afghans', 'poles', 'irish', 'italians', 'germans', 'french', 'americans', 'europeans',
    'atheists', 'zionists', 'feminists',
  ],
  GROUP_ADJECTIVE: [
    'black', 'white', 'jewish', 'muslim', 'gay', 'trans', 'transgender', 'asian', 'disabled', 'brown', 'mexican',
    'chinese', 'indian', 'arab', 'african', 'christian', 'hindu', 'lesbian', 'queer', 'bisexual', 'immigrant',
    'latino', 'hispanic', 'autistic', 'native', 'indigenous',
  ],
  PEOPLE: ['people', 'folks', 'men', 'women', 'persons', 'kids', 'children', 'families', 'communities', 'individuals'],
  BE: ['are', 'r', 'is', 'were', 'aint', 'arent'],
  INTENSIFIER: ['all', 'just', 'nothing', 'but', 'such', 'like', 'literally', 'basically', 'fucking', 'filthy', 'dirty', 'disgusting', 'no', 'better', 'than', 'simply', 'truly', 'a', 'an', 'the', 'bunch', 'of', 'inherently', 'genetically', 'naturally', 'mere', 'nothing'],
  DEHUMANIZING: [
    'animals', 'animal', 'vermin', 'subhuman', 'subhumans', 'parasites', 'parasite', 'cockroaches', 'roaches', 'rats',
    'filth', 'scum', 'savages', 'savage', 'apes', 'monkeys', 'pigs', 'dogs', 'inferior', 'trash', 'garbage', 'disease',
    'plague', 'cancer', 'degenerates', 'degenerate', 'abominations', 'abomination', 'evil', 'worthless', 'untermenschen',
    'mongrels', 'invaders', 'infestation', 'insects', 'beasts', 'barbarians', 'criminals', 'rapists', 'terrorists',
    'lesser', 'unclean', 'swine', 'leeches', 'maggots', 'filthy', 'disgusting', 'cancerous', 'stupid', 'dumb', 'lazy',
  ],
  EXTERMINATE: ['die', 'killed', 'exterminated', 'gassed', 'shot', 'hanged', 'hung', 'burned', 'burnt', 'lynched', 'eradicated', 'eliminated', 'wiped', 'slaughtered', 'executed', 'massacred', 'purged', 'sterilized', 'culled', 'genocided', 'burn'],
  DEPORT: ['deported', 'expelled', 'banned', 'removed', 'kicked', 'segregated', 'leave', 'go'],
  EXTERMINATE_VERB: ['kill', 'gas', 'exterminate', 'eradicate', 'lynch', 'hang', 'shoot', 'burn', 'genocide', 'purge', 'cull', 'eliminate', 'slaughter', 'massacre', 'nuke', 'sterilize'],
  HATE_VERB: ['hate', 'despise', 'loathe', 'detest', 'fuck'],
  RIGHTS: ['rights', 'live', 'exist', 'vote', 'respect', 'breathe', 'freedom', 'citizenship', 'humanity', 'equality'],
  HOME_PLACE: ['country', 'countries', 'jungle', 'desert', 'cave', 'caves', 'shithole', 'homeland'],
  HOLOCAUST_DENIAL: ['never', 'hoax', 'lie', 'myth', 'fake', 'exaggerated', 'fabricated', 'didnt', 'fiction'],
  DEHUMANIZING_STRONG: [
    'animals', 'vermin', 'subhuman', 'subhumans', 'parasites', 'cockroaches', 'roaches', 'rats', 'filth', 'scum', 'savages',
    'apes', 'monkeys', 'pigs', 'degenerates', 'abominations', 'untermenschen', 'mongrels', 'infestation', 'insects',
    'beasts', 'barbarians', 'swine', 'leeches', 'maggots', 'cancer', 'plague', 'disease',
  ],
  // --- harassment ---------------------------------------------------------------------------
  YOU_ARE: ['you', 'youre', 'ur', 'u', 'yall'],
  INSULT_LEAD: [
    'are', 'r', 'a', 'an', 'such', 'so', 'the', 'total', 'complete', 'absolute', 'fucking', 'stupid', 'little', 'dumb',
    'worthless', 'pathetic', 'ugly', 'fat', 'utter', 'massive', 'huge', 'big', 'damn', 'goddamn', 'useless', 'disgusting',
    'bunch', 'of', 'fat', 'lazy', 'piece', 'of', 'nothing', 'but', 'just',
  ],
  INSULT: [
    'idiot', 'idiots', 'moron', 'morons', 'loser', 'losers', 'imbecile', 'cretin', 'dumbass', 'dipshit', 'jackass',
    'asshole', 'assholes', 'bitch', 'bitches', 'bastard', 'bastards', 'cunt', 'cunts', 'prick', 'scumbag', 'shit',
    'failure', 'disgrace', 'pig', 'slut', 'whore', 'freak', 'stupid', 'dumb', 'ugly', 'worthless', 'pathetic', 'useless',
    'disgusting', 'trash', 'garbage', 'clown', 'creep', 'nobody', 'twat', 'wanker', 'douche', 'douchebag', 'fatass',
    'retarded', 'braindead', 'subhuman', 'vermin', 'scum', 'parasite', 'waste', 'mistake', 'embarrassment', 'hoe', 'skank',
  ],
};

/** Hashed sets (`%NAME`): `hashTerm` fingerprints of normalized words, 13 hex digits each. */
export const HASHED_SETS: Record<string, readonly string[]> = {
  /** Racial, ethnic, religious and homophobic slurs that have no common innocent meaning. */
  SLURS: [
    '78dc09869db7a', 'ed9b244586446', '9dc2163f35265', '0388f6b386b71', '234b24dbb0fe2', '82fe6c195b529',
    '41b605b6d3eb1', '1f4ab49c13958', 'f1d5b23c6c694', 'a8c04ea123f9d', '4f53b5acc3305', '3b72ceb6473a4',
    'feeb273e15383', '00f236c8fb975', '254dee97cdfcc', '6e1c51616ad3a', '0410e93beca67', '72f9a7dbf207a',
    'f58cbd05431b4', '68d1adca3020e', '98b82e0860ba9', '0e46b7775cf25', '46244860fba6c', 'bb68577ee01b1',
    '26349e1b57d71', 'd0468ea5f14fb',
  ],
  /** Slurs that also have an innocent meaning in some contexts (a word in an idiom, a surname, British slang). */
  SLURS_AMBIGUOUS: ['8b18db4287d1d', 'f66355c33bb11', '9098ff2618e26', '0168450b37934', '2b573277a314d', '3d3e0633ee4b1', '8452bffcd7c11', '4a4fcca381159'],
  /** Ableist slurs. */
  SLURS_ABLEIST: ['4ccd563439617', '9ad041a0284c5'],
  /** Transphobic slurs with a sexual connotation. */
  SLURS_SEXUALIZED: ['92a1e837257b5', '979363fa99ee6'],
};

/**
 * The signals. Weights: 0.05–0.3 for a single word that is usually innocent, 0.3–0.55 for a
 * word or phrase that is usually but not always what it seems, 0.6–0.9 for a phrase that is.
 */
export const SIGNALS: readonly SignalSpec[] = [
  // ============================== violence and threats =======================================
  // "I'm going to kill you", "i will fucking end you", "imma stab all of you".
  {
    id: 'threat-second-person',
    pattern: '$SUBJECT_FIRST $MODAL? $MODAL? $MODAL? $MODAL? ^$HARM_VERB_STRONG $QUANTIFIER? $QUANTIFIER? $TARGET_SECOND',
    scores: { violence: 0.8, 'harassment/threatening': 0.85, harassment: 0.55 },
    unlessNext: '$THREAT_BENIGN|$TECHNICAL_NOUN',
    unlessPrevious: '$APOLOGY',
  },
  {
    id: 'threat-second-person-weak',
    pattern: '$SUBJECT_FIRST $MODAL? $MODAL? $MODAL? $MODAL? ^$HARM_VERB_WEAK $QUANTIFIER? $QUANTIFIER? $TARGET_SECOND',
    scores: { violence: 0.55, 'harassment/threatening': 0.6, harassment: 0.45 },
    unlessNext: '$THREAT_BENIGN|$TECHNICAL_NOUN',
    unlessPrevious: '$APOLOGY',
  },
  // "I'm going to kill him", "we will shoot everyone".
  {
    id: 'threat-third-person',
    pattern: '$SUBJECT_FIRST $MODAL? $MODAL? $MODAL? $MODAL? ^$HARM_VERB_STRONG $QUANTIFIER? $QUANTIFIER? $TARGET_THIRD',
    scores: { violence: 0.75, 'harassment/threatening': 0.45, harassment: 0.2 },
    unlessNext: '$THREAT_BENIGN|$TECHNICAL_NOUN',
    unlessPrevious: '$APOLOGY',
  },
  { id: 'threat-fuck-up', pattern: '^fuck $TARGET_SECOND|$TARGET_THIRD up', scores: { violence: 0.45, 'harassment/threatening': 0.55, harassment: 0.5 } },
  { id: 'threat-beat-up', pattern: '^beat $TARGET_SECOND|$TARGET_THIRD|the ~2 up|out', scores: { violence: 0.6, 'harassment/threatening': 0.4 }, unlessNext: 'competition|odds|rush|traffic|heat|record' },
  { id: 'threat-hunt-down', pattern: '^hunt $TARGET_SECOND|$TARGET_THIRD down', scores: { violence: 0.5, 'harassment/threatening': 0.6, harassment: 0.4 } },
  { id: 'threat-you-will-die', pattern: '$YOU_ARE will|gonna|going|shall|are|re ~2 ^die|bleed|suffer', scores: { 'harassment/threatening': 0.6, violence: 0.45, harassment: 0.45 }, unlessNext: 'of|from|laughing|happy|old|someday|eventually|anyway|if|unless|when|in|without|a|the|too' },
  { id: 'threat-you-are-dead', pattern: 'youre|ur ~1 ^dead|deadmeat', scores: { 'harassment/threatening': 0.45, violence: 0.3, harassment: 0.3 }, unlessNext: 'wrong|right|serious|tired|on|set|last|end|inside|weight|code|link|links' },
  { id: 'threat-know-where-you-live', pattern: 'i know ^where $TARGET_SECOND live|sleep|work', scores: { 'harassment/threatening': 0.65, harassment: 0.55, violence: 0.2 } },
  { id: 'threat-watch-your-back', pattern: '^watch your back', scores: { 'harassment/threatening': 0.35, harassment: 0.3 } },
  { id: 'threat-days-numbered', pattern: 'your ^days are numbered', scores: { 'harassment/threatening': 0.55, harassment: 0.45, violence: 0.2 } },
  { id: 'threat-coming-for-you', pattern: 'im|were|i|we ~2 ^coming for $TARGET_SECOND', scores: { 'harassment/threatening': 0.4, harassment: 0.35 } },
  { id: 'threat-will-find-you', pattern: '$SUBJECT_FIRST will|gonna|going? to? ^find $TARGET_SECOND', scores: { 'harassment/threatening': 0.35, harassment: 0.25 }, unlessNext: 'a|an|the|some|something|one|somewhere|someone|anything|more|useful|interesting' },
  { id: 'threat-in-your-sleep', pattern: '^kill|murder|stab|strangle|smother $TARGET_SECOND|$TARGET_THIRD in $PERSONAL_POSSESSIVE sleep', scores: { violence: 0.75, 'harassment/threatening': 0.7 } },
  { id: 'threat-deserve-to-die', pattern: 'deserves|deserve to ^die|suffer|burn|rot', scores: { violence: 0.6, 'harassment/threatening': 0.5, harassment: 0.5 }, unlessNext: 'with|peacefully|in|at|of|happy|a|an|the|for|alone' },
  { id: 'threat-deserve-to-be-killed', pattern: 'deserves|deserve to be|get ^killed|shot|hanged|tortured|murdered|raped|beaten|stabbed|lynched', scores: { violence: 0.65, 'harassment/threatening': 0.55, harassment: 0.5 } },
  { id: 'threat-should-be-killed', pattern: 'should|must|ought|needs|need ~1 be|get ^killed|shot|hanged|lynched|tortured|murdered|stabbed|beheaded', scores: { violence: 0.55, 'harassment/threatening': 0.4, harassment: 0.3 }, unlessPrevious: '$TECHNICAL_NOUN|bill|project|scene|photo|photos|video|film|movie|footage|it|this|that', unlessNext: 'at|in|on|with|by|from|using|for|during|after|before|first|once|again|when|if|as|via|the|each|down|off' },
  // "how to kill someone", "best way to poison my wife".
  { id: 'violence-how-to-kill', pattern: '$METHOD_WORD ~3 ^kill|murder|poison|strangle|stab|shoot|suffocate|smother|drown $DETERMINER? $HUMAN_NOUN', scores: { violence: 0.7 }, unlessNext: '$TECHNICAL_NOUN|$MINOR_BENIGN' },
  { id: 'violence-to-death', pattern: 'tortured|tortures|torture|torturing|beat|beats|beaten|beating|stabbed|stabs|stab|stabbing|burned|burns|burn|burning|bludgeoned|strangled|stoned|kicked|whipped|hacked|starved|mauled|trampled|choked ~3 to ^death', scores: { violence: 0.6, 'violence/graphic': 0.35 }, tag: 'VIOLENT' },
  { id: 'violence-get-away-with-murder', pattern: 'get ^away with murder|killing|killing', scores: { violence: 0.35 } },
  { id: 'violence-attack-place', pattern: '^shoot|bomb|attack|blow|burn|firebomb|gas up? $DETERMINER? $PLACE_TARGET', scores: { violence: 0.7, 'harassment/threatening': 0.3 }, unlessPrevious: 'photo|photos|video|videos|film|scene|music|footage', unlessNext: 'play|photos|photo|video|videos|musical|yearbook|portraits|portrait|event|ceremony|graduation|prom|dance|scene|scenes|level|map|boss|raid' },
  { id: 'violence-mass-shooting', pattern: 'mass|school|church|mosque ^shooting|shootings|murder|murders|stabbing', scores: { violence: 0.45 } },
  { id: 'violence-shoot-up', pattern: '^shoot up $DETERMINER? $PLACE_TARGET|place|town|party|club|crowd', scores: { violence: 0.75, 'harassment/threatening': 0.4 } },
  { id: 'violence-make-bomb', pattern: 'make|build|assemble|construct|making|building $DETERMINER? pipe|nail|car|dirty|homemade|fertilizer? ^bomb|bombs|explosive|explosives|ied|ieds', scores: { violence: 0.6 } },
  { id: 'violence-molotov', pattern: '^molotov', scores: { violence: 0.4 } },
  { id: 'violence-open-fire', pattern: 'open ^fire on|at', scores: { violence: 0.5 } },
  { id: 'violence-ethnic-cleansing', pattern: 'ethnic ^cleansing', scores: { violence: 0.4, hate: 0.4 } },
  { id: 'violence-word-kill', pattern: 'kill|kills|killed|killing|killings|killer|killers', scores: { violence: 0.15 }, unlessNext: '$TECHNICAL_NOUN|it|switch|feature|app|time|off|me|joke' },
  { id: 'violence-word-murder', pattern: 'murder|murders|murdered|murdering|murderer|murderers|murderous', scores: { violence: 0.3 }, unlessNext: 'mystery|mysteries|board|podcast|podcasts|novel|novels|drones|hornet|hornets|crows', tag: 'VIOLENT' },
  { id: 'violence-word-stab', pattern: 'stab|stabbed|stabbing|stabbings|stabs', scores: { violence: 0.3 }, unlessPrevious: 'a|another|quick|first', unlessNext: 'at', tag: 'VIOLENT' },
  { id: 'violence-word-shoot', pattern: 'shoot|shooting|shootings|shooter|shooters|gunman|gunmen|gunfire', scores: { violence: 0.1 }, unlessNext: 'me|us|email|emails|message|photo|photos|video|videos|film|scene|for|the|hoops|pool|star|stars|script|over|question|questions|game|games|first|day|location|breeze' },
  { id: 'violence-word-shot-dead', pattern: 'shot ^dead', scores: { violence: 0.5 }, tag: 'VIOLENT' },
  { id: 'violence-word-gunned-down', pattern: '^gunned down', scores: { violence: 0.5 } },
  { id: 'violence-word-strangle', pattern: 'strangle|strangled|strangling|strangulation', scores: { violence: 0.35 }, tag: 'VIOLENT' },
  { id: 'violence-word-behead', pattern: 'behead|beheaded|beheading|beheadings|decapitate|decapitated|decapitation', scores: { violence: 0.5, 'violence/graphic': 0.3 }, tag: 'VIOLENT' },
  { id: 'violence-word-massacre', pattern: 'massacre|massacred|massacres|slaughter|slaughtered|slaughtering|genocide|genocides|bloodbath', scores: { violence: 0.35 }, unlessPrevious: 'pig|pigs|cattle|chicken|chickens|animal|animals', unlessNext: 'house|houses|hall|halls', tag: 'VIOLENT' },
  { id: 'violence-word-torture', pattern: 'torture|tortured|torturing|tortures', scores: { violence: 0.35 }, tag: 'VIOLENT' },
  { id: 'violence-word-lynch', pattern: 'lynch|lynched|lynching|lynchings|lynchmob', scores: { violence: 0.45 }, unlessNext: 'pin|pins|law|road|street' },
  { id: 'violence-word-assault', pattern: 'assault|assaulted|assaulting|attacked|ambushed|bludgeoned|pummeled|maimed', scores: { violence: 0.15 }, unlessNext: 'rifle|rifles|course|courses' },
  { id: 'violence-word-terror', pattern: 'terrorist|terrorists|terrorism|jihad|jihadist|jihadists|bombing|bombings|bomber|bombers', scores: { violence: 0.2 }, unlessPrevious: 'suicide' },
  { id: 'violence-word-suicide-bomb', pattern: 'suicide ^bomber|bombers|bombing|bombings|vest', scores: { violence: 0.45 } },
  { id: 'violence-word-weapon', pattern: 'gun|guns|rifle|rifles|pistol|knife|knives|machete|grenade|grenades|ammo|ammunition', scores: { violence: 0.05 } },
  { id: 'violence-word-bomb', pattern: 'bomb|bombs|explosive|explosives|detonate|detonator', scores: { violence: 0.1 }, unlessPrevious: 'bath|photo|f|da|sex|cherry|atomic|the', unlessNext: 'threat|disposal|squad|shelter|shelters|scare|drill' },
  { id: 'violence-word-blood', pattern: 'blood|bloody|bleeding|bled|corpse|corpses|wounds|wounded', scores: { violence: 0.05 }, unlessNext: 'test|tests|pressure|sugar|type|donation|donor|bank|cells|cell|orange|moon|work|glucose|sample|samples|mary|vessel|vessels|brother|brothers|oath' },
  { id: 'violence-word-rape', pattern: 'rape|raped|raping|rapist|rapists', scores: { violence: 0.5, sexual: 0.45 }, unlessNext: 'seed|seeds|oil|field|fields', tag: 'SEX_STRONG' },
  { id: 'violence-word-execute-person', pattern: '^execute|executed $DETERMINER? prisoner|prisoners|hostage|hostages|him|her|them|civilians|captives|dissidents|traitors', scores: { violence: 0.55 } },
  { id: 'violence-slit-throat', pattern: '^slit|cut|slash $PERSONAL_POSSESSIVE? throat|throats|wrists', scores: { violence: 0.55, 'violence/graphic': 0.3 } },
  // ============================== graphic violence ==========================================
  { id: 'graphic-detail', pattern: 'in ~1 graphic|gory|gruesome|vivid|excruciating|explicit|lurid|bloody ^detail|details|description', tag: 'GRAPHIC_DETAIL' },
  { id: 'graphic-detail-violent', near: ['GRAPHIC_DETAIL', 'VIOLENT'], within: 12, scores: { 'violence/graphic': 0.55, violence: 0.4 } },
  { id: 'graphic-word-gore', pattern: 'gore|gory|gruesome|grisly', scores: { 'violence/graphic': 0.35, violence: 0.2 }, unlessNext: 'vidal|tex|texas' },
  { id: 'graphic-word-disembowel', pattern: 'disembowel|disemboweled|disembowelled|disemboweling|eviscerate|eviscerated|evisceration|evisceration', scores: { 'violence/graphic': 0.6, violence: 0.5 } },
  { id: 'graphic-word-dismember', pattern: 'dismember|dismembered|dismembering|dismemberment|mutilate|mutilated|mutilating|mutilation|mangled|maimed', scores: { 'violence/graphic': 0.5, violence: 0.4 }, tag: 'VIOLENT' },
  { id: 'graphic-gore-spill', pattern: '^$GORE_NOUN ~2 $GORE_VERB', scores: { 'violence/graphic': 0.6, violence: 0.4 }, unlessPrevious: 'ct|mri|scan|donor|donate|test', unlessNext: 'to|as|via|through|for' },
  { id: 'graphic-gore-spill-reverse', pattern: '$GORE_VERB ~2 ^$GORE_NOUN', scores: { 'violence/graphic': 0.55, violence: 0.35 }, unlessNext: 'test|tests|pressure|sugar|type|donation|donor|bank|cells|marrow|density|broth' },
  { id: 'graphic-rip-flesh', pattern: 'ripped|ripping|tore|torn|tearing|peeled|peeling|gouged|gouging|flayed|clawed ~2 ^$BODY_PART', scores: { 'violence/graphic': 0.45, violence: 0.35 }, unlessNext: 'jeans|jean|ligament|acl|meniscus|muscle|muscles|hamstring|rotator|calf|shirt|paper|off|open|label|page|pages' },
  { id: 'graphic-gouged-eyes', pattern: '^gouged|gouge|gouging out? $PERSONAL_POSSESSIVE? eyes|eye|eyeballs', scores: { 'violence/graphic': 0.6, violence: 0.5 } },
  { id: 'graphic-severed', pattern: '^severed|hacked|chopped|sawed|sawn|cleaved off? $SEVERED_PART', scores: { 'violence/graphic': 0.5, violence: 0.4 }, unlessNext: 'connection|ties|ties|cable|cord|nerve' },
  { id: 'graphic-alive', pattern: '$ALIVE_VERB $TARGET_THIRD|$TARGET_SECOND|them|victims|prisoners? ^alive', scores: { 'violence/graphic': 0.65, violence: 0.55 } },
  { id: 'graphic-skull', pattern: '^skull|skulls|head ~1 crushed|caved|shattered|split|cracked|smashed|exploded|exploding|splattered', scores: { 'violence/graphic': 0.5, violence: 0.4 }, unlessPrevious: 'ct|mri|scan|brain' },
  { id: 'graphic-blown-brains', pattern: 'blew|blow|blown|blowing ~2 ^brains|brain|head|heads out|off', scores: { 'violence/graphic': 0.55, violence: 0.55 } },
  { id: 'graphic-bled-out', pattern: '^bled|bleed|bleeding out', scores: { 'violence/graphic': 0.3, violence: 0.3 } },
  { id: 'graphic-exposed-bone', pattern: 'exposed|protruding|jutting|splintered ^bone|bones|skull|ribs', scores: { 'violence/graphic': 0.45, violence: 0.3 } },
  { id: 'graphic-pool-of-blood', pattern: 'pool|pools|puddle|river|rivers|sea|fountain|spray|splatter|spatter of ^blood|gore|entrails', scores: { 'violence/graphic': 0.5, violence: 0.35 } },
  // ============================== self-harm ===================================================
  // "I'm going to kill myself", "i want to end it all".
  {
    id: 'self-harm-intent-kill-myself',
    pattern: '$SUBJECT_FIRST $MODAL? $MODAL? $MODAL? $MODAL? ^$SELF_HARM_VERB $MYSELF',
    scores: { 'self-harm': 0.85, 'self-harm/intent': 0.85 },
  },
  { id: 'self-harm-intent-kill-myself-bare', pattern: '^kill|killing|killed|hang|hanging|hurt|hurting|cutting|cut|starve|starving $MYSELF', scores: { 'self-harm': 0.6, 'self-harm/intent': 0.4 }, unlessNext: 'laughing|with|working|over|trying|for|off|short|some|a|in' },
  { id: 'self-harm-intent-to-kill-myself', pattern: 'to ^kill|hang|end|off|shoot|poison|drown $MYSELF', scores: { 'self-harm': 0.8, 'self-harm/intent': 0.6 }, unlessNext: 'laughing|with|working|over|trying|for|short|some|a|in' },
  { id: 'self-harm-intent-end-my-life', pattern: 'end|take|ending|taking my own? ^life', scores: { 'self-harm': 0.85, 'self-harm/intent': 0.85 }, unlessNext: 'back|savings|insurance|story|work|seriously|in|into|to' },
  { id: 'self-harm-intent-end-it-all', pattern: '$SUBJECT_FIRST $MODAL? $MODAL? $MODAL? ^end it all', scores: { 'self-harm': 0.65, 'self-harm/intent': 0.6 } },
  { id: 'self-harm-intent-want-to-die', pattern: 'i|im ~2 want|wanna|going|ready|wish|deserve|need|plan|planning ~2 ^die', scores: { 'self-harm': 0.8, 'self-harm/intent': 0.8 }, unlessNext: 'of|from|laughing|happy|old|peacefully|trying|young|on|in|for|hard|with|when|before|after|someday|a|an|the|my|at|doing|if|because', unlessPrevious: 'game|character|plant|battery' },
  { id: 'self-harm-intent-wish-dead', pattern: 'i ~1 wish i|id ~1 was|were|be ^dead', scores: { 'self-harm': 0.7, 'self-harm/intent': 0.7 } },
  { id: 'self-harm-intent-never-born', pattern: 'i ~1 wish i|id ~1 was|were|had ~1 ^never born|been', scores: { 'self-harm': 0.5, 'self-harm/intent': 0.45 } },
  { id: 'self-harm-intent-dont-want-to-live', pattern: 'i|im ~1 dont|not|no ~1 want|wanna|longer ~2 ^live|living|exist|existing|alive|wake|here ~1 anymore?', scores: { 'self-harm': 0.75, 'self-harm/intent': 0.75 }, negatable: false, unlessNext: 'there|in|with|near|like|as|without|on|at|by|for|under|through|together|a|the|my|this|that|so|off' },
  { id: 'self-harm-intent-no-reason-to-live', pattern: 'no|nothing|not|isnt ~1 ^reason|point|purpose ~1 to|in|for ~1 $LIVE_WORD', scores: { 'self-harm': 0.55, 'self-harm/intent': 0.55 }, negatable: false, unlessNext: 'here|there|in|with|this|that|forever|the|code|it' },
  { id: 'self-harm-intent-better-off-dead', pattern: 'better ^off dead|without', scores: { 'self-harm': 0.6, 'self-harm/intent': 0.55 }, unlessNext: 'it|that|this|the|them|him|her|a|an|those|these|using|any' },
  { id: 'self-harm-intent-suicidal', pattern: 'i|im|ive|id ~3 ^suicidal', scores: { 'self-harm': 0.75, 'self-harm/intent': 0.7 } },
  { id: 'self-harm-intent-commit-suicide', pattern: '$SUBJECT_FIRST $MODAL? $MODAL? $MODAL? $MODAL? commit|attempt ^suicide', scores: { 'self-harm': 0.9, 'self-harm/intent': 0.9 } },
  { id: 'self-harm-intent-suicide-note', pattern: 'writing|wrote|written|write|wrote|leave|left|draft ~1 my|a ^suicide note|letter', scores: { 'self-harm': 0.7, 'self-harm/intent': 0.65 } },
  { id: 'self-harm-intent-goodbye', pattern: 'goodbye ^cruel world', scores: { 'self-harm': 0.5, 'self-harm/intent': 0.45 } },
  { id: 'self-harm-intent-hide-cuts', pattern: 'hide|hiding|cover|covering ~1 my|the ^cuts|scars|burns', scores: { 'self-harm': 0.5, 'self-harm/intent': 0.4 } },
  { id: 'self-harm-intent-cutting', pattern: 'i|im|been|started|start|keep ~2 ^cutting again|myself|my', scores: { 'self-harm': 0.5, 'self-harm/intent': 0.45 }, unlessNext: 'hair|nails|losses|costs|back|down|carbs|sugar' },
  { id: 'self-harm-word-suicide', pattern: 'suicide|suicides|suicidal', scores: { 'self-harm': 0.3 }, unlessNext: '$SUICIDE_BENIGN' },
  { id: 'self-harm-word-self-harm', pattern: '^self harm|harming|injury|injure|mutilation|mutilate', scores: { 'self-harm': 0.4 }, unlessNext: '$SUICIDE_BENIGN' },
  { id: 'self-harm-word-selfharm', pattern: 'selfharm|selfharming|selfinjury|cutter|kms', scores: { 'self-harm': 0.35 } },
  { id: 'self-harm-word-overdose', pattern: 'overdose|overdosed|overdosing', scores: { 'self-harm': 0.2 } },
  { id: 'self-harm-word-lethal-dose', pattern: 'lethal|fatal|deadly ^dose|dosage|amount', scores: { 'self-harm': 0.2, 'self-harm/instructions': 0.3 } },
  { id: 'self-harm-word-slit-wrists', pattern: '^slit|slitting|slash|slashing|cut|cutting my|your|her|his|the? wrists|wrist', scores: { 'self-harm': 0.6, 'self-harm/intent': 0.3 } },
  { id: 'self-harm-word-kill-yourself', pattern: '^kill|hang|shoot|neck|unalive|off yourself|urself|yourselves', scores: { harassment: 0.8, 'harassment/threatening': 0.55, 'self-harm': 0.35, violence: 0.3 }, unlessPrevious: 'to|how|ways|way|not|dont|never|wont|would' },
  { id: 'self-harm-word-kys', pattern: 'kys', scores: { harassment: 0.7, 'harassment/threatening': 0.5, 'self-harm': 0.3 } },
  { id: 'self-harm-go-die', pattern: 'go|just ^die|drown|hang ~2 in? a? fire|already|yourself|plz|please|pls|now', scores: { harassment: 0.65, 'harassment/threatening': 0.5, violence: 0.3 } },
  { id: 'self-harm-drink-bleach', pattern: 'drink|eat|swallow ^bleach', scores: { harassment: 0.55, 'harassment/threatening': 0.3, 'self-harm': 0.4 }, unlessPrevious: 'dont|never|not' },
  // instructions: "how do I kill myself", "most painless way to commit suicide", "how many pills to overdose".
  { id: 'self-harm-instructions-how-to', pattern: '$METHOD_WORD ~6 ^$SELF_HARM_VERB $SELF', scores: { 'self-harm': 0.85, 'self-harm/instructions': 0.85, 'self-harm/intent': 0.3 }, unlessNext: 'out|at|in|during|while|when|by|lifting|is|was|would|if|on|with|a|an|some|slack|off|free|loose|up|down|into|from|the' },
  { id: 'self-harm-instructions-suicide', pattern: '$METHOD_WORD ~3 commit|attempt|to|for|of ^suicide', scores: { 'self-harm': 0.85, 'self-harm/instructions': 0.85, 'self-harm/intent': 0.2 }, unlessNext: '$SUICIDE_BENIGN' },
  { id: 'self-harm-instructions-way-to-die', pattern: 'painless|painlessly|easiest|quickest|fastest|best|surest|peaceful|quick|easy ~2 way|ways|method|methods ~1 to ^die', scores: { 'self-harm': 0.8, 'self-harm/instructions': 0.8 }, unlessNext: 'in|on|at|for|with|from|when|if|as|during|while|a|an|the|my|of' },
  { id: 'self-harm-instructions-pills', pattern: 'how much|many ~3 ^$PILLS ~5 $DEATH_WORD', scores: { 'self-harm': 0.75, 'self-harm/instructions': 0.75 } },
  { id: 'self-harm-instructions-cut-deep', pattern: 'how|where|way ~3 cut|slit ^deep|deeper|vertically|vein|veins|artery|arteries', scores: { 'self-harm': 0.7, 'self-harm/instructions': 0.7 } },
  { id: 'self-harm-instructions-giving', pattern: 'to kill|end|off ^yourself|urself ~1 you|just|simply|first ~2 take|jump|use|tie|buy|mix|swallow|cut|get', scores: { 'self-harm': 0.7, 'self-harm/instructions': 0.65 } },
  { id: 'self-harm-instructions-noose', pattern: 'tie|tying|make|making ~2 ^noose|nooses', scores: { 'self-harm': 0.45, 'self-harm/instructions': 0.45 } },
  // ============================== sexual ======================================================
  { id: 'sexual-word-porn', pattern: 'porn|porno|pornography|pornographic|hentai|nsfl', scores: { sexual: 0.55 }, tag: 'SEX_STRONG', unlessPrevious: 'revenge|anti|against|addiction|blocker|block|filter' },
  { id: 'sexual-word-nsfw', pattern: 'nsfw', scores: { sexual: 0.3 }, tag: 'SEX_MEDIUM', unlessNext: 'filter|filters|detection|detector|classifier|check|checker|flag|tag|content|model|models|images|filtering' },
  { id: 'sexual-word-erotic', pattern: 'erotic|erotica|erotically|smut|smutty|lewd|raunchy', scores: { sexual: 0.45 }, tag: 'SEX_STRONG' },
  { id: 'sexual-erotic-story', pattern: '^erotic|erotica|smut|lewd|sexy|dirty|nsfw|explicit|steamy|kinky|raunchy $EXPLICIT_NOUN', scores: { sexual: 0.55 }, tag: 'SEX_STRONG', unlessPrevious: 'no|not|avoid|without|flag|filter|detect|block|moderate' },
  { id: 'sexual-sex-story', pattern: '^sex|sexual $EXPLICIT_NOUN', scores: { sexual: 0.4 }, tag: 'SEX_STRONG', unlessPrevious: 'no|not|avoid|without|flag|filter|detect|block|moderate' },
  { id: 'sexual-explicit-sex', pattern: 'explicit|graphic|detailed|hardcore|raunchy ~2 ^sex|sexual|erotic|intercourse', scores: { sexual: 0.55 }, tag: 'SEX_STRONG' },
  { id: 'sexual-word-nudes', pattern: 'nudes|sexting|sext|sexts', scores: { sexual: 0.45 }, tag: 'SEX_STRONG' },
  { id: 'sexual-send-nudes', pattern: 'send|sending|sent|share|sharing|trade|trading ~2 ^nudes|nude|naked', scores: { sexual: 0.5 }, tag: 'SEX_STRONG' },
  { id: 'sexual-word-nude', pattern: 'nude|naked|nudity|topless|bottomless|undressed|undress|undressing|unclothed|stripped|strip|stripping', scores: { sexual: 0.2 }, tag: 'SEX_MEDIUM', unlessNext: 'eye|tags|tag|whitespace|html|characters|string|strings|spaces|the|mall|club|lights|steak|mining|sauce|color|colour|lipstick|heels|shoes|pantyhose|palette|beach|tones|tone' },
  { id: 'sexual-naked-body', pattern: '^nude|naked|topless|sexy|explicit|lewd $NAKED_NOUN', scores: { sexual: 0.55 }, tag: 'SEX_STRONG', unlessNext: 'art|painting|paintings|sculpture|sculptures|statue|statues|figure|drawing|drawings|model|class|study' },
  { id: 'sexual-word-horny', pattern: 'horny|orgasm|orgasms|orgasmic|orgasming|masturbate|masturbating|masturbation|masturbated', scores: { sexual: 0.55 }, tag: 'SEX_STRONG', unlessNext: 'toad|toads|lizard|lizards|beetle|beetles' },
  { id: 'sexual-jerk-off', pattern: '^jerk|jerking|jerked off', scores: { sexual: 0.5 }, tag: 'SEX_STRONG' },
  { id: 'sexual-word-act', pattern: 'blowjob|blowjobs|handjob|handjobs|cunnilingus|fellatio|threesome|gangbang|creampie|deepthroat|rimjob|bukkake|cumshot|footjob|titfuck|69ing', scores: { sexual: 0.7 }, tag: 'SEX_STRONG' },
  { id: 'sexual-oral-anal', pattern: 'oral|anal ^sex|intercourse|penetration', scores: { sexual: 0.6 }, tag: 'SEX_STRONG' },
  { id: 'sexual-word-cum', pattern: 'cum|cumming|cummed|jizz|semen|ejaculate|ejaculating|ejaculation|precum', scores: { sexual: 0.4 }, tag: 'SEX_STRONG', unlessNext: 'laude|laude|grano|hoc|dividend' },
  { id: 'sexual-word-genital-slang', pattern: 'dick|dicks|cock|cocks|pussy|pussies|clit|clitoris|boner|boners|tits|titties|boobs|boobies|dildo|dildos|vibrator|vibrators', scores: { sexual: 0.3 }, tag: 'SEX_MEDIUM', unlessNext: 'van|tracy|cheney|grayson|clark|sporting|fight|fights|ring|tail|tails|willow|cat|cats|footed|pox|roach|pit|blue|great|nest|nests|bird|birds|move|moves', unlessPrevious: 'moby|philip|k|van|blue|great|tom|weather|turkey|game' },
  { id: 'sexual-word-genital-medical', pattern: 'penis|penises|vagina|vaginas|vulva|genitals|genitalia|testicles|scrotum|anus|nipple|nipples|erection|erections|aroused|arousal|foreplay', scores: { sexual: 0.15 }, tag: 'SEX_MEDIUM' },
  { id: 'sexual-word-fetish', pattern: 'kinky|fetish|fetishes|bdsm|bondage|dominatrix|stripper|strippers|striptease|lapdance|camgirl|camgirls|onlyfans|prostitute|prostitutes|prostitution|brothel|brothels', scores: { sexual: 0.25 }, tag: 'SEX_STRONG' },
  { id: 'sexual-word-sexy', pattern: 'sexy|seduce|seduces|seducing|seductive|seduction|seductively|sensual|sensually|lingerie|kink|kinks', scores: { sexual: 0.2 }, tag: 'SEX_STRONG' },
  { id: 'sexual-word-underwear', pattern: 'panties|thong|thongs', scores: { sexual: 0.15 }, tag: 'SEX_MEDIUM' },
  { id: 'sexual-word-moan', pattern: 'moan|moans|moaned|moaning|thrusting|groping|grope|groped|fondle|fondled|fondling|caressed|caressing', scores: { sexual: 0.1 }, tag: 'SEX_MEDIUM' },
  { id: 'sexual-word-sex', pattern: 'sex|sexual|sexually|intercourse|intimate|intimacy|sexuality', scores: { sexual: 0.12 }, tag: 'SEX_WEAK', unlessNext: '$SEX_BENIGN', unlessPrevious: 'biological|opposite|same|birth|assigned|gender|of|by|both|either|male|female|patient|patients|animal|animals|chromosomal|the' },
  { id: 'sexual-have-sex', pattern: 'have|having|had|has|wanna|want|do|doing|did ~2 ^sex|intercourse', scores: { sexual: 0.55 }, tag: 'SEX_STRONG', unlessNext: '$SEX_BENIGN' },
  { id: 'sexual-sex-with', pattern: '^sex with', scores: { sexual: 0.45 }, tag: 'SEX_STRONG', unlessNext: 'respect|regard|reference|age|other' },
  { id: 'sexual-make-love', pattern: '^make|making|made love to|with', scores: { sexual: 0.4 }, tag: 'SEX_STRONG' },
  { id: 'sexual-fuck-me', pattern: '^fuck|fucks|fucking|fucked|screw|screwing|bang|banging|ride|riding me|her|him|you|u|them|each ~1 hard|harder|deep|deeper|senseless|raw|now|tonight|baby|daddy|slowly|all|other', scores: { sexual: 0.55 }, tag: 'SEX_STRONG', unlessNext: 'over|up|off|out|this|that|the' },
  { id: 'sexual-word-fuck', pattern: 'fuck|fucking|fucked|fucks|fucker|fuckers', scores: { sexual: 0.1 } },
  { id: 'sexual-suck-dick', pattern: '^suck|sucks|sucked|sucking|lick|licks|licked|licking|touch|touches|touched|touching|rub|rubs|rubbed|rubbing|stroke|strokes|stroked|stroking|grab|grabbed|grabbing|squeeze|squeezed my|your|his|her|their $SEX_ORGAN', scores: { sexual: 0.75 }, tag: 'SEX_STRONG' },
  { id: 'sexual-take-off-clothes', pattern: 'take|taking|took|pull|pulling|pulled|rip|ripped|slip|slipped ^off|down $PERSONAL_POSSESSIVE $CLOTHING', scores: { sexual: 0.4 }, tag: 'SEX_MEDIUM' },
  { id: 'sexual-take-off-clothes-postposed', pattern: 'take|taking|took|pull|pulling|pulled|rip|ripped|slip|slipped $PERSONAL_POSSESSIVE ^$CLOTHING off|down', scores: { sexual: 0.4 }, tag: 'SEX_MEDIUM', unlessNext: 'the|a|to|and|at|for' },
  { id: 'sexual-wet-for', pattern: 'so? ^wet|horny for $TARGET_SECOND|me|daddy|mommy', scores: { sexual: 0.45 }, tag: 'SEX_STRONG', unlessPrevious: 'was|is|be|been|it|its|floor|ground|paint|road|roads|too|still' },
  { id: 'sexual-sleep-with', pattern: '^sleep|sleeping|slept with me|her|him|you|u|them', scores: { sexual: 0.25 }, tag: 'SEX_MEDIUM' },
  { id: 'sexual-slut', pattern: 'slut|sluts|slutty|whore|whores|skank|skanks|hoe|hoes|milf|milfs', scores: { sexual: 0.3, harassment: 0.35 }, tag: 'SEX_MEDIUM', unlessPrevious: 'garden|gardening|rake|shovel' },
  { id: 'sexual-nonconsensual', pattern: 'nonconsensual|noncon|dubcon|molest|molested|molesting|molestation|molester', scores: { sexual: 0.45, violence: 0.3 }, tag: 'SEX_STRONG' },
  { id: 'sexual-non-consensual', pattern: 'non ^consensual|consent', scores: { sexual: 0.35, violence: 0.25 }, tag: 'SEX_STRONG' },
  { id: 'sexual-against-will', pattern: '^against $PERSONAL_POSSESSIVE will', scores: { violence: 0.25 }, tag: 'NONCONSENT' },
  // ============================== sexual content and minors ==================================
  { id: 'minor-word', pattern: '$MINOR_WORD', tag: 'MINOR', unlessNext: '$MINOR_BENIGN|$TECHNICAL_NOUN' },
  { id: 'minor-word-weak', pattern: '$MINOR_WEAK_WORD', tag: 'MINOR_WEAK', unlessNext: '$MINOR_BENIGN|$TECHNICAL_NOUN|adult|adults|professional|professionals|man|woman|men|women|people|stars|star|blood|age' },
  { id: 'minor-little-girl', pattern: '$LITTLE ^$GIRL_BOY', tag: 'MINOR' },
  { id: 'minor-age', pattern: '$UNDER_18 $YEAR ^old|olds', tag: 'MINOR' },
  { id: 'minor-age-token', pattern: '$UNDER_18_AGE_TOKEN', tag: 'MINOR', unlessNext: 'experience|warranty|anniversary|old' },
  { id: 'minor-age-aged', pattern: '^aged|age|ages $UNDER_18', tag: 'MINOR', unlessNext: 'and|to|or|plus|years|months|percent|days|weeks|of' },
  { id: 'minor-age-statement', pattern: 'im|shes|hes|turned|turning|just ^$UNDER_18_NUMBER', tag: 'MINOR_WEAK', unlessNext: 'minutes|min|mins|hours|days|weeks|months|percent|feet|ft|inches|cm|miles|km|kg|lbs|dollars|times|x|am|pm|of|out|or|and|to|items|users|files|more|steps|seconds|points' },
  { id: 'minor-school', pattern: '$SCHOOL_LEVEL ^school|schooler|schoolers|schools', tag: 'MINOR' },
  { id: 'minor-high-school', pattern: 'high ^school|schooler|schoolers', tag: 'MINOR_WEAK' },
  { id: 'minor-grade', pattern: '$GRADE_ORDINAL ^grade|grader|graders', tag: 'MINOR' },
  { id: 'minor-sexual-specific', pattern: 'loli|lolis|lolicon|shota|shotacon|jailbait|pedo|pedophile|paedophile|pedophilia|paedophilia|pedophilic|kiddie|kiddy', scores: { 'sexual/minors': 0.35, sexual: 0.25 } },
  { id: 'minor-child-porn', pattern: 'child|children|kid|kiddie|kiddy|underage|teen|preteen ^porn|porno|pornography|pornographic|sex|erotica|nudes|nude|xxx', scores: { 'sexual/minors': 0.9, sexual: 0.6 }, unlessNext: 'abuse|trafficking|offender|offenders|education|ed|crimes|crime|exploitation|predator|predators|ring|rings|tourism|laws|law|case|cases|scandal' },
  { id: 'minor-sexual-strong', near: ['MINOR', 'SEX_STRONG'], within: 12, scores: { 'sexual/minors': 0.9, sexual: 0.5 } },
  // Nudity near a child is usually a bath, a beach or a doctor: below the threshold alone.
  { id: 'minor-sexual-medium', near: ['MINOR', 'SEX_MEDIUM'], within: 8, scores: { 'sexual/minors': 0.3 } },
  { id: 'minor-sexual-weak', near: ['MINOR', 'SEX_WEAK'], within: 6, scores: { 'sexual/minors': 0.3, sexual: 0.1 } },
  { id: 'minor-weak-sexual-strong', near: ['MINOR_WEAK', 'SEX_STRONG'], within: 8, scores: { 'sexual/minors': 0.45, sexual: 0.3 } },
  { id: 'minor-weak-sexual-medium', near: ['MINOR_WEAK', 'SEX_MEDIUM'], within: 6, scores: { 'sexual/minors': 0.2 } },
  // ============================== hate ========================================================
  { id: 'hate-slur', pattern: '%SLURS', scores: { hate: 0.55, harassment: 0.35 } },
  { id: 'hate-slur-ambiguous', pattern: '%SLURS_AMBIGUOUS', scores: { hate: 0.35, harassment: 0.2 }, unlessNext: 'in|of|armor|armour|van|bridge|wall|walls|river|cigarette|cigarettes|fag|lighter' },
  { id: 'hate-slur-ableist', pattern: '%SLURS_ABLEIST', scores: { harassment: 0.4, hate: 0.3 }, unlessPrevious: 'flame|fire|growth' },
  { id: 'hate-slur-sexualized', pattern: '%SLURS_SEXUALIZED', scores: { hate: 0.35, sexual: 0.3, harassment: 0.2 } },
  // "immigrants are vermin", "gay people are an abomination", "women are inferior".
  { id: 'hate-dehumanizing', pattern: '^$GROUP|$GROUP_ADJECTIVE|%SLURS $PEOPLE? $BE $INTENSIFIER? $INTENSIFIER? $INTENSIFIER? $DEHUMANIZING', scores: { hate: 0.8, harassment: 0.35 }, unlessNext: 'behavior|behaviour|policy|policies|systems|system', unlessPrevious: 'egg|eggs|crushed|deep|rich|true|pure|bright|off|cool|warm|tent|ski|fishing|totem|the' },
  { id: 'hate-dehumanizing-strong', pattern: '^$GROUP|%SLURS ~4 $BE $INTENSIFIER? $INTENSIFIER? $DEHUMANIZING_STRONG', scores: { hate: 0.7, harassment: 0.3 }, unlessPrevious: 'egg|eggs|the' },
  { id: 'hate-i-hate-group', pattern: 'i|we ~2 ^$HATE_VERB all? the? $GROUP', scores: { hate: 0.6, harassment: 0.3 } },
  { id: 'hate-i-hate-group-people', pattern: 'i|we ~2 ^$HATE_VERB all? the? $GROUP_ADJECTIVE $PEOPLE', scores: { hate: 0.6, harassment: 0.3 } },
  { id: 'hate-group-should-die', pattern: '^$GROUP|$GROUP_ADJECTIVE|%SLURS $PEOPLE? should|must|need|deserve|ought|will|gotta|shall ~2 $EXTERMINATE', scores: { 'hate/threatening': 0.85, hate: 0.8, violence: 0.6 } },
  { id: 'hate-group-should-go', pattern: '^$GROUP|$GROUP_ADJECTIVE|%SLURS $PEOPLE? should|must|need|deserve|ought ~2 $DEPORT', scores: { hate: 0.4 } },
  { id: 'hate-exterminate-group', pattern: '$EXTERMINATE_VERB all|the|every|those|these? the|those|these? ^$GROUP|%SLURS', scores: { 'hate/threatening': 0.85, hate: 0.8, violence: 0.7 }, unlessPrevious: 'how|why|did|didnt|who', unlessNext: 'fries|toast|press|horn|door|doors|bread|braid|bulldog|language|tomatoes|colors|colours|pixels|channel|channels' },
  { id: 'hate-exterminate-group-people', pattern: '$EXTERMINATE_VERB all|the|every|those|these? the|those|these? $GROUP_ADJECTIVE ^$PEOPLE', scores: { 'hate/threatening': 0.8, hate: 0.75, violence: 0.65 }, unlessPrevious: 'how|why|did|didnt|who' },
  { id: 'hate-wipe-out-group', pattern: '^wipe|wiping out all|the|every? $GROUP|$GROUP_ADJECTIVE|%SLURS', scores: { 'hate/threatening': 0.8, hate: 0.75, violence: 0.6 } },
  { id: 'hate-no-rights', pattern: '^$GROUP|$GROUP_ADJECTIVE|%SLURS $PEOPLE? should|do|does|must|can? dont|shouldnt|doesnt|not|never|cant ~2 deserve|have|allowed to? $RIGHTS', scores: { hate: 0.7 }, negatable: false },
  { id: 'hate-go-back', pattern: 'go ^back to your|their own? $HOME_PLACE', scores: { hate: 0.55, harassment: 0.45 } },
  { id: 'hate-nazi-slogans', pattern: 'heil ^hitler|hitla', scores: { hate: 0.6 } },
  { id: 'hate-sieg-heil', pattern: 'sieg ^heil', scores: { hate: 0.55 } },
  { id: 'hate-1488', pattern: '1488', scores: { hate: 0.45 } },
  { id: 'hate-white-power', pattern: 'white ^power|supremacy|pride|genocide ~1 is? right|rules|forever|now|worldwide|wins', scores: { hate: 0.5 } },
  { id: 'hate-white-power-bare', pattern: 'white ^power|supremacist|supremacists|nationalist|nationalists|nationalism|supremacy', scores: { hate: 0.2 } },
  { id: 'hate-master-race', pattern: 'master|superior|inferior|pure|mongrel ^race|races|blood|bloodline', scores: { hate: 0.45 }, unlessPrevious: 'f1|horse|horses|car|cars' },
  { id: 'hate-race-traitor', pattern: 'race ^traitor|traitors|mixing', scores: { hate: 0.55 } },
  { id: 'hate-subhuman', pattern: 'subhuman|subhumans|untermensch|untermenschen|mudblood|mudbloods|mongrels', scores: { hate: 0.35, harassment: 0.25 } },
  { id: 'hate-holocaust-denial', pattern: '^holocaust|shoah ~2 $HOLOCAUST_DENIAL', scores: { hate: 0.6 }, negatable: false },
  { id: 'hate-gas-the', pattern: '^gas the $GROUP|%SLURS', scores: { 'hate/threatening': 0.85, hate: 0.85, violence: 0.6 } },
  // ============================== harassment ==================================================
  // "you're a worthless idiot", "you are so stupid", "u fucking moron".
  { id: 'harassment-you-insult', pattern: '$YOU_ARE $INSULT_LEAD? $INSULT_LEAD? $INSULT_LEAD? $INSULT_LEAD? ^$INSULT|%SLURS|%SLURS_ABLEIST', scores: { harassment: 0.65 }, unlessNext: 'code|function|idea|question|attempt|solution|implementation|approach|movie|song|article|film|program' },
  { id: 'harassment-word-insult-strong', pattern: 'cunt|cunts|dumbass|dipshit|imbecile|twat|wanker|scumbag|douchebag|motherfucker|motherfuckers', scores: { harassment: 0.35 } },
  { id: 'harassment-word-insult', pattern: 'idiot|idiots|moron|morons|asshole|assholes|bitch|bitches|bastard|bastards|jackass|prick|loser|losers', scores: { harassment: 0.2 }, unlessPrevious: 'son|sons|life|lifes|baby|lucky' },
  { id: 'harassment-word-insult-mild', pattern: 'stupid|dumb|ugly|pathetic|worthless|useless|disgusting|fatass|braindead|clown', scores: { harassment: 0.06 } },
  { id: 'harassment-piece-of-shit', pattern: 'piece of ^shit|garbage|trash|crap', scores: { harassment: 0.4 } },
  { id: 'harassment-waste-of-space', pattern: '^waste of space|oxygen|air|skin|life|flesh', scores: { harassment: 0.55 } },
  { id: 'harassment-fuck-you', pattern: '^fuck|screw you|u|ya|yourself|urself|off|yall', scores: { harassment: 0.5 }, unlessNext: 'to|the|this|that|it|a|work|for|up' },
  { id: 'harassment-stfu', pattern: 'stfu|gtfo', scores: { harassment: 0.3 } },
  { id: 'harassment-shut-up', pattern: '^shut up|your|ur', scores: { harassment: 0.15 }, unlessNext: 'and|n|take|lol|haha|shop' },
  { id: 'harassment-nobody-likes-you', pattern: 'nobody|noone ^likes|loves|cares|wants|respects about? $TARGET_SECOND', scores: { harassment: 0.55 }, unlessNext: 'to|being|doing|when' },
  { id: 'harassment-no-one-likes-you', pattern: 'no one ^likes|loves|cares|wants|respects about? $TARGET_SECOND', scores: { harassment: 0.55 }, unlessNext: 'to|being|doing|when' },
  { id: 'harassment-everyone-hates-you', pattern: 'everyone|everybody|we|they|people|all ^hate|hates|despise|despises|laughs|laugh at? $TARGET_SECOND', scores: { harassment: 0.5 } },
  { id: 'harassment-ashamed', pattern: 'you ~1 should be ^ashamed', scores: { harassment: 0.2 } },
  { id: 'harassment-go-to-hell', pattern: 'go to ^hell', scores: { harassment: 0.35 } },
  { id: 'harassment-rot-in-hell', pattern: '^rot|burn|die in hell|fire|agony', scores: { harassment: 0.45, 'harassment/threatening': 0.3 } },
  { id: 'harassment-ugly-fat', pattern: '$YOU_ARE are|r|so|such|a? ~1 ^fat|ugly|hideous|disgusting ~1 pig|cow|whale|slob|freak|troll|mess|loser|bitch|ugly', scores: { harassment: 0.6 } },
  { id: 'harassment-you-should-die', pattern: '$YOU_ARE should|need|ought|deserve|must|can ~2 ^die|rot|suffer|drown|burn', scores: { harassment: 0.7, 'harassment/threatening': 0.5, violence: 0.3 }, unlessNext: 'of|from|laughing|happy|old|someday|in|with|a|the|if|when' },
  { id: 'harassment-hope-you-die', pattern: 'hope|wish|pray ~3 $YOU_ARE ~3 ^die|dies|died|suffer|rot|drown|burn', scores: { harassment: 0.65, 'harassment/threatening': 0.45, violence: 0.25 }, unlessNext: 'of|from|laughing|happy|old|peacefully' },
  { id: 'harassment-nobody-would-care', pattern: 'nobody|noone|one ~2 care|cares|miss|notice ~1 if|when $YOU_ARE ^died|die|disappeared|vanished|left', scores: { harassment: 0.6 } },
  { id: 'harassment-no-one-will-love', pattern: 'nobody|noone|one will|would|could ever? ^love|miss|want $TARGET_SECOND', scores: { harassment: 0.55 } },
];

