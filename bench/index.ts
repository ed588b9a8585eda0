/**
 * Runs every `bench/*.bench.ts` in name order; `npm run bench -- sse chat` runs only those. Each file's default
 * export runs its benchmarks and prints its own table; a full run also writes them to bench/RESULTS.md with the
 * Node version, the CPU model and the date.
 */
import { readdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { report } from './input.ts';

const SUFFIX = '.bench.ts';
const dir = fileURLToPath(new URL('.', import.meta.url));
const names = (await readdir(dir))
  .filter((file) => file.endsWith(SUFFIX))
  .map((file) => file.slice(0, -SUFFIX.length))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !names.includes(name));
if (unknown.length > 0) {
  console.error(`Unknown bench: ${unknown.join(', ')}. Available: ${names.join(', ')}`);
  process.exit(1);
}

const started = performance.now();
const loadAtStart = loadavg()[0] ?? 0;
for (const name of wanted.length > 0 ? names.filter((n) => wanted.includes(n)) : names) {
  const bench = (await import(pathToFileURL(`${dir}${name}${SUFFIX}`).href)) as { default: () => Promise<void> };
  console.log(`\n## ${name}\n`);
  report.push(`## ${name}\n`);
  await bench.default();
  report.push('');
}
const minutes = (performance.now() - started) / 60_000;

if (wanted.length === 0) {
  const cpu = cpus();
  const header = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` (see bench/README.md for the shapes and the floor). Every figure is from one run, the`,
    'contenders of a table interleaved in the same process; compare ratios, not absolute times (a shared machine).',
    'Times are CPU times, so a contender waiting for a core is not charged for it; contention still moves the ratios',
    'by a few hundredths between runs, and the wall-clock figures (events/s, first byte) carry the load below.',
    '',
    `- date: ${new Date().toISOString()}`,
    `- node: ${process.version} (${process.platform}/${process.arch})`,
    `- cpu: ${cpu[0]?.model.trim() ?? 'unknown'}, ${cpu.length} logical cores`,
    `- load average (1 min) at the start and the end: ${loadAtStart.toFixed(1)}, ${(loadavg()[0] ?? 0).toFixed(1)} on ${cpu.length} cores (other people's work on the machine)`,
    `- whole run: ${minutes.toFixed(1)} min`,
    '',
  ];
  await writeFile(new URL('RESULTS.md', import.meta.url), `${[...header, ...report].join('\n').trimEnd()}\n`);
  console.log(`\nwrote bench/RESULTS.md (${minutes.toFixed(1)} min)`);
} else {
  console.log(`\n(${minutes.toFixed(1)} min; bench/RESULTS.md is written only by a full run)`);
}
