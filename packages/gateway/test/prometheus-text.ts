/**
 * A strict reader of the Prometheus text exposition format (0.0.4), written from its specification for the metrics
 * tests: it throws on anything the format does not allow (a sample before its TYPE, a family split in two, an unknown
 * escape in a label value, a bad number), and checks each histogram (buckets by increasing `le`, cumulative counts
 * that never fall, a `+Inf` bucket equal to `_count`).
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string | undefined;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES: ReadonlyArray<Family['type']> = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];

function isType(text: string): text is Family['type'] {
  return TYPES.some((type) => type === text);
}

/** Reads a whole exposition into its families by name. */
export function parsePrometheusText(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a line feed');
  const families = new Map<string, Family>();
  const finished = new Set<string>();
  let current: Family | undefined;
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((line, index) => {
    const at = `line ${index + 1}`;
    if (line === '') return; // the format ignores empty lines (prom-client writes one between families)
    const meta = /^# (HELP|TYPE) ([^ ]+)(?: (.*))?$/.exec(line);
    if (meta) {
      const [, kind, name = '', rest = ''] = meta;
      if (!NAME.test(name) || NAME.exec(name)?.[0] !== name) throw new Error(`${at}: bad metric name ${name}`);
      let family = families.get(name);
      if (!family) {
        if (current) finished.add(current.name);
        family = { name, help: undefined, type: 'untyped', samples: [] };
        families.set(name, family);
        current = family;
      } else if (family !== current) throw new Error(`${at}: ${name} is split in two`);
      if (kind === 'HELP') {
        if (family.help !== undefined) throw new Error(`${at}: a second HELP for ${name}`);
        family.help = unescapeHelp(rest, at);
      } else {
        if (family.samples.length > 0) throw new Error(`${at}: TYPE of ${name} after its samples`);
        if (!isType(rest)) throw new Error(`${at}: unknown type ${rest}`);
        family.type = rest;
      }
      return;
    }
    if (line.startsWith('#')) return; // a comment
    const sample = parseSample(line, at);
    const family = current && familyOf(current, sample.name) ? current : undefined;
    if (!family) throw new Error(`${at}: ${sample.name} is not in the family before it (${current?.name ?? 'none'})`);
    if (finished.has(family.name)) throw new Error(`${at}: ${family.name} is split in two`);
    family.samples.push(sample);
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** Whether a sample's name belongs to the family: its own name, or a histogram's or summary's suffixed ones. */
function familyOf(family: Family, name: string): boolean {
  if (name === family.name) return family.type !== 'histogram';
  const suffixes = family.type === 'histogram' ? ['_bucket', '_sum', '_count'] : family.type === 'summary' ? ['_sum', '_count'] : [];
  return suffixes.some((suffix) => name === `${family.name}${suffix}`);
}

function parseSample(line: string, at: string): Sample {
  const name = NAME.exec(line)?.[0];
  if (!name) throw new Error(`${at}: no metric name`);
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    while (!rest.startsWith('}')) {
      const label = LABEL_NAME.exec(rest)?.[0];
      if (!label) throw new Error(`${at}: bad label name in ${line}`);
      if (Object.hasOwn(labels, label)) throw new Error(`${at}: label ${label} twice`);
      rest = rest.slice(label.length);
      if (!rest.startsWith('="')) throw new Error(`${at}: label ${label} has no quoted value`);
      rest = rest.slice(2);
      let value = '';
      for (;;) {
        const char = rest[0];
        if (char === undefined) throw new Error(`${at}: unterminated label value`);
        rest = rest.slice(1);
        if (char === '"') break;
        if (char === '\n') throw new Error(`${at}: a raw line feed in a label value`);
        if (char !== '\\') {
          value += char;
          continue;
        }
        const escaped = rest[0];
        rest = rest.slice(1);
        if (escaped === '\\') value += '\\';
        else if (escaped === '"') value += '"';
        else if (escaped === 'n') value += '\n';
        else throw new Error(`${at}: unknown escape \\${escaped ?? ''} in a label value`);
      }
      labels[label] = value;
      if (rest.startsWith(',')) rest = rest.slice(1);
      else if (!rest.startsWith('}')) throw new Error(`${at}: expected , or } after label ${label}`);
    }
    rest = rest.slice(1);
  }
  const fields = /^ (\S+)(?: (-?\d+))?$/.exec(rest);
  if (!fields?.[1]) throw new Error(`${at}: bad value in ${line}`);
  return { name, labels, value: parseValue(fields[1], at) };
}

function parseValue(text: string, at: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`${at}: not a number: ${text}`);
  return Number(text);
}

function unescapeHelp(text: string, at: string): string {
  return text.replace(/\\(.?)/g, (_, char: string) => {
    if (char === '\\') return '\\';
    if (char === 'n') return '\n';
    throw new Error(`${at}: unknown escape \\${char} in HELP`);
  });
}

/** Each series of a histogram: buckets by increasing `le`, cumulative, `+Inf` equal to `_count`, and a `_sum`. */
function checkHistogram(family: Family): void {
  const series = new Map<string, { buckets: Array<[number, number]>; count?: number; sum?: number }>();
  for (const sample of family.samples) {
    const { le, ...labels } = sample.labels;
    const key = JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));
    const one = series.get(key) ?? { buckets: [] };
    series.set(key, one);
    if (sample.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${family.name}: a bucket without le`);
      one.buckets.push([parseValue(le, family.name), sample.value]);
    } else if (sample.name.endsWith('_count')) one.count = sample.value;
    else one.sum = sample.value;
  }
  for (const [key, { buckets, count, sum }] of series) {
    const where = `${family.name} ${key}`;
    if (count === undefined || sum === undefined) throw new Error(`${where}: no _count or no _sum`);
    for (let i = 1; i < buckets.length; i++) {
      const [le, n] = buckets[i] ?? [0, 0];
      const [previousLe, previousN] = buckets[i - 1] ?? [0, 0];
      if (!(le > previousLe)) throw new Error(`${where}: le not increasing`);
      if (n < previousN) throw new Error(`${where}: bucket counts fall`);
    }
    const last = buckets.at(-1);
    if (last?.[0] !== Number.POSITIVE_INFINITY) throw new Error(`${where}: no +Inf bucket last`);
    if (last[1] !== count) throw new Error(`${where}: +Inf bucket ${last[1]} is not _count ${count}`);
  }
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none). */
export function total(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const family = [...families.values()].find((one) => one.samples.some((sample) => sample.name === name));
  return (family?.samples ?? [])
    .filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
    .reduce((sum, sample) => sum + sample.value, 0);
}
