/**
 * Reading `/metrics` in tests: a small strict parser of the Prometheus text
 * exposition format (0.0.4) — HELP and TYPE lines, samples with escaped label
 * values, histograms grouped into buckets, sum and count per label set — that
 * throws on any line it does not understand, and lookups by exact label set.
 * (parse-prometheus-text-format, the registry's parser, drops the labels of
 * histogram samples, so it cannot check per-label counts.)
 */

export type Labels = Record<string, string>;

export interface Sample {
  name: string;
  labels: Labels;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?$/;

function parseValue(raw: string, line: string): number {
  // Like Prometheus (Go's ParseFloat): infinities and NaN in any case.
  const word = raw.toLowerCase();
  if (word === '+inf' || word === 'inf') return Infinity;
  if (word === '-inf') return -Infinity;
  if (word === 'nan') return NaN;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new Error(`bad sample value in: ${line}`);
  return value;
}

function parseLabels(text: string, line: string): Labels {
  const labels: Labels = {};
  let index = 0;
  while (index < text.length) {
    const nameMatch = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(text.slice(index));
    if (!nameMatch) throw new Error(`bad label in: ${line}`);
    index += nameMatch[0].length;
    let value = '';
    while (true) {
      const char = text[index];
      if (char === undefined) throw new Error(`unterminated label value in: ${line}`);
      index++;
      if (char === '"') break;
      if (char === '\\') {
        const escaped = text[index++];
        if (escaped === 'n') value += '\n';
        else if (escaped === '\\' || escaped === '"') value += escaped;
        else throw new Error(`bad escape in: ${line}`);
      } else value += char;
    }
    if (nameMatch[1]! in labels) throw new Error(`repeated label in: ${line}`);
    labels[nameMatch[1]!] = value;
    if (text[index] === ',') index++;
    else if (index < text.length) throw new Error(`bad label separator in: ${line}`);
  }
  return labels;
}

/** Parses an exposition; samples belong to the family of the last TYPE line whose name they extend. */
export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const familyOf = (name: string): Family => {
    let family = families.get(name);
    if (!family) {
      family = { name, type: 'untyped', help: '', samples: [] };
      families.set(name, family);
    }
    return family;
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!meta) continue;
      if (!NAME.test(meta[2]!)) throw new Error(`bad metric name in: ${line}`);
      const family = familyOf(meta[2]!);
      if (meta[1] === 'HELP') family.help = meta[3]!;
      else {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(meta[3]!)) throw new Error(`bad type in: ${line}`);
        family.type = meta[3]!;
      }
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const name = match[1]!;
    const base = families.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
    const family = families.get(base);
    if (!family) throw new Error(`sample without a TYPE line: ${line}`);
    family.samples.push({ name, labels: parseLabels(match[3] ?? '', line), value: parseValue(match[4]!, line) });
  }
  return families;
}

function sameLabels(a: Labels, b: Labels): boolean {
  const keys = Object.keys(b);
  return Object.keys(a).length === keys.length && keys.every((key) => a[key] === b[key]);
}

function withoutLe(labels: Labels): Labels {
  const { le: _le, ...rest } = labels;
  return rest;
}

export class Scrape {
  readonly families: Map<string, Family>;

  constructor(readonly text: string) {
    this.families = parsePrometheusText(text);
  }

  family(name: string): Family {
    const family = this.families.get(name);
    if (!family) throw new Error(`no metric family ${name} in the scrape`);
    return family;
  }

  /** A counter or gauge sample with exactly these labels; 0 when absent. */
  value(name: string, labels: Labels = {}): number {
    return this.family(name).samples.find((sample) => sample.name === name && sameLabels(sample.labels, labels))?.value ?? 0;
  }

  /** The sum of a counter's or gauge's samples whose labels include these. */
  sum(name: string, match: Labels = {}): number {
    return this.family(name)
      .samples.filter((sample) => sample.name === name && Object.entries(match).every(([key, value]) => sample.labels[key] === value))
      .reduce((total, sample) => total + sample.value, 0);
  }

  /** A histogram's observation count with exactly these labels (checked against its +Inf bucket); 0 when absent. */
  histogramCount(name: string, labels: Labels): number {
    const samples = this.family(name).samples;
    const count = samples.find((sample) => sample.name === `${name}_count` && sameLabels(sample.labels, labels))?.value ?? 0;
    const inf = samples.find((sample) => sample.name === `${name}_bucket` && sample.labels.le === '+Inf' && sameLabels(withoutLe(sample.labels), labels))?.value ?? 0;
    if (count !== inf) throw new Error(`${name}: count ${count} differs from the +Inf bucket ${inf}`);
    return count;
  }

  /** A histogram's bucket bounds (le values, `+Inf` included), in exposition order. */
  bucketBounds(name: string): string[] {
    const buckets = this.family(name).samples.filter((sample) => sample.name === `${name}_bucket`);
    const first = buckets[0] ? withoutLe(buckets[0].labels) : {};
    return buckets.filter((sample) => sameLabels(withoutLe(sample.labels), first)).map((sample) => sample.labels.le!);
  }

  /** Every label value of every sample. */
  labelValues(): string[] {
    return [...this.families.values()].flatMap((family) => family.samples.flatMap((sample) => Object.values(sample.labels)));
  }
}

export async function scrape(url: string, token?: string): Promise<Scrape> {
  const response = await fetch(`${url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  return new Scrape(await response.text());
}
