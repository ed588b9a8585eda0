/**
 * Runs every `bench/*.bench.ts` in name order; `npm run bench -- sse chat` runs only those. Each file's default
 * export runs its benchmarks and prints its own table.
 */
import { readdir } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

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

for (const name of wanted.length > 0 ? names.filter((n) => wanted.includes(n)) : names) {
  const bench = (await import(pathToFileURL(`${dir}${name}${SUFFIX}`).href)) as { default: () => Promise<void> };
  console.log(`\n## ${name}\n`);
  await bench.default();
}
