/**
 * The numeric fields of every multipart /v1 route (issue 20's fuzz): a form
 * carries numbers as text, so each field gets text that is no number or one
 * out of every range — a fraction where an integer is expected, negatives,
 * `1e309` (Infinity once parsed), `NaN`, hex, huge, empty, a word — and the
 * field sent twice. Each is answered 2xx or a 4xx in the route's error shape,
 * never a 5xx. The fields come from the input schemas of the procedures the
 * route table names, so a numeric field added to a form is fuzzed without
 * touching this file; each route also gets the numeric fields of the other
 * multipart routes, which it does not define.
 *
 * The forms are built with Node's FormData and Blob, as `fetch` sends them,
 * with a small WAV or PNG file made in memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toneWav } from '../audio/audio-fixtures.js';
import { makePng } from '../images/image-e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer, toAnswer, type Answer } from '../support/http.js';
import { MULTIPART_BASELINES, problemOf, routeNumericPaths, TEXT_VALUES } from './numeric-fuzz.js';

type Baseline = (typeof MULTIPART_BASELINES)[string];

const FIXTURES = {
  wav: { bytes: toneWav(0.5), type: 'audio/wav' },
  png: { bytes: makePng(64, 64), type: 'image/png' },
};

/** Numeric fields of other formats that no multipart schema lists (the gateway ignores or refuses them). */
const UNMODELLED_FIELDS = ['n', 'top_logprobs', 'seed', 'max_tokens'];
/** For the fields a route does not define: fewer values to keep the run short. */
const FOREIGN_VALUES = ['3.5', '-1', '1e309', 'abc'];

/** The baseline form with each of `fields` set (a name twice: the field repeated), files last as a client sends them. */
function formOf(base: Baseline, fields: Array<[string, string]>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(base.fields)) if (!fields.some(([field]) => field === name)) form.append(name, value);
  for (const [name, value] of fields) form.append(name, value);
  for (const [name, kind] of Object.entries(base.files)) form.append(name, new Blob([FIXTURES[kind].bytes], { type: FIXTURES[kind].type }), `fuzz.${kind}`);
  return form;
}

async function postForm(url: string, form: FormData, key: string): Promise<Answer> {
  return toAnswer(await fetch(url, { method: 'POST', headers: bearer(key), body: form }));
}

/** The top-level numeric fields of a multipart route's procedure (a form has no nesting). */
function formFieldsOf(route: string): string[] {
  return routeNumericPaths(route)
    .filter((path) => path.length === 1)
    .map((path) => path[0]!);
}

describe('numeric fields of every multipart /v1 route: 2xx or a 4xx in the route shape, never a 5xx', () => {
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway({
      // Video jobs stay queued (nothing renders them during the run); no rate limit or balance cuts the fuzz short.
      env: { RATE_LIMITS: 'pro=1000000', VIDEO_WORKER_INTERVAL_MS: '3600000', VIDEO_MAX_QUEUED_PER_ACCOUNT: '100000' },
    });
    ({ key } = await gateway.createAccountWithKey({ credits: 1_000_000 }));
  });
  afterAll(() => gateway?.close());

  const routes = Object.keys(MULTIPART_BASELINES);

  it('lists the numeric fields of the forms from their schemas', () => {
    expect(formFieldsOf('POST /v1/audio/transcriptions')).toContain('temperature');
    expect(formFieldsOf('POST /v1/audio/translations')).toContain('temperature');
    expect(formFieldsOf('POST /v1/images/edits')).toEqual(expect.arrayContaining(['n', 'partial_images']));
    expect(formFieldsOf('POST /v1/videos')).toContain('seconds');
  });

  it('answers each baseline form 2xx', async () => {
    for (const route of routes) {
      const answer = await postForm(`${gateway.url}${route.slice('POST '.length)}`, formOf(MULTIPART_BASELINES[route]!, []), key);
      expect(answer.status, `${route}: ${answer.text.slice(0, 300)}`).toBeLessThan(300);
    }
  });

  for (const route of routes) {
    it(`${route}: its own numeric fields as text, repeated, and the other forms'`, async () => {
      const base = MULTIPART_BASELINES[route]!;
      const own = formFieldsOf(route);
      const foreign = [...new Set([...routes.flatMap(formFieldsOf), ...UNMODELLED_FIELDS])].filter((name) => !own.includes(name));
      const cases: Array<Array<[string, string]>> = [
        ...own.flatMap((name) => TEXT_VALUES.map((value): Array<[string, string]> => [[name, value]])),
        ...own.map((name): Array<[string, string]> => [[name, '1'], [name, '2']]),
        ...foreign.flatMap((name) => FOREIGN_VALUES.map((value): Array<[string, string]> => [[name, value]])),
      ];
      const problems: string[] = [];
      for (const fields of cases) {
        const answer = await postForm(`${gateway.url}${route.slice('POST '.length)}`, formOf(base, fields), key);
        const problem = problemOf(answer, false);
        if (problem) problems.push(`${route} ${fields.map(([name, value]) => `${name}=${JSON.stringify(value)}`).join(' ')}: ${problem}`);
      }
      expect(problems).toEqual([]);
    });
  }
});
