/**
 * The languages Whisper transcribes, by ISO-639-1 code (a few have no
 * two-letter code: `haw`, `yue`), with the lower-case English names that
 * OpenAI's `verbose_json` answers carry in `language` (`"english"`, not
 * `"en"`). Routes can validate the `language` field against the codes.
 */
export const TRANSCRIPT_LANGUAGE_NAMES: Readonly<Record<string, string>> = {
  af: 'afrikaans', am: 'amharic', ar: 'arabic', as: 'assamese', az: 'azerbaijani',
  ba: 'bashkir', be: 'belarusian', bg: 'bulgarian', bn: 'bengali', bo: 'tibetan',
  br: 'breton', bs: 'bosnian', ca: 'catalan', cs: 'czech', cy: 'welsh',
  da: 'danish', de: 'german', el: 'greek', en: 'english', es: 'spanish',
  et: 'estonian', eu: 'basque', fa: 'persian', fi: 'finnish', fo: 'faroese',
  fr: 'french', gl: 'galician', gu: 'gujarati', ha: 'hausa', haw: 'hawaiian',
  he: 'hebrew', hi: 'hindi', hr: 'croatian', ht: 'haitian creole', hu: 'hungarian',
  hy: 'armenian', id: 'indonesian', is: 'icelandic', it: 'italian', ja: 'japanese',
  jw: 'javanese', ka: 'georgian', kk: 'kazakh', km: 'khmer', kn: 'kannada',
  ko: 'korean', la: 'latin', lb: 'luxembourgish', ln: 'lingala', lo: 'lao',
  lt: 'lithuanian', lv: 'latvian', mg: 'malagasy', mi: 'maori', mk: 'macedonian',
  ml: 'malayalam', mn: 'mongolian', mr: 'marathi', ms: 'malay', mt: 'maltese',
  my: 'myanmar', ne: 'nepali', nl: 'dutch', nn: 'nynorsk', no: 'norwegian',
  oc: 'occitan', pa: 'punjabi', pl: 'polish', ps: 'pashto', pt: 'portuguese',
  ro: 'romanian', ru: 'russian', sa: 'sanskrit', sd: 'sindhi', si: 'sinhala',
  sk: 'slovak', sl: 'slovenian', sn: 'shona', so: 'somali', sq: 'albanian',
  sr: 'serbian', su: 'sundanese', sv: 'swedish', sw: 'swahili', ta: 'tamil',
  te: 'telugu', tg: 'tajik', th: 'thai', tk: 'turkmen', tl: 'tagalog',
  tr: 'turkish', tt: 'tatar', uk: 'ukrainian', ur: 'urdu', uz: 'uzbek',
  vi: 'vietnamese', yi: 'yiddish', yo: 'yoruba', yue: 'cantonese', zh: 'chinese',
};

/** The `verbose_json` language name for an ISO-639-1 code (case-insensitive), or undefined if Whisper does not know it. */
export function toTranscriptLanguageName(code: string): string | undefined {
  return TRANSCRIPT_LANGUAGE_NAMES[code.trim().toLowerCase()];
}
