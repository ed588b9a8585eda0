/**
 * Extracts every ```ts block of README.md, docs/*.md and each package README into test-artifacts/snippets/, one module each, so `npm run typecheck`
 * compiles them against the packages' sources: a snippet that no longer matches the API fails CI. It also fails when
 * an example under examples/ is referenced from neither README.md nor docs/.
 *
 * A snippet that needs context it does not show (a tool defined in an earlier block, a client) declares it in a
 * hidden prelude: an HTML comment right before the fence, `<!-- prelude` ... `-->`, whose lines are prepended.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'test-artifacts', 'snippets');
const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md'));
const packages = readdirSync(join(root, 'packages')).sort();
const sources = [
  'README.md',
  ...docs.sort().map((f) => `docs/${f}`),
  ...packages.map((name) => `packages/${name}/README.md`),
];
// The prelude may not contain `-->`: an unclosed or misplaced prelude must not swallow the text up to a later fence.
const BLOCK = /(?:<!-- prelude\n((?:(?!-->)[\s\S])*)-->\n)?```ts\n([\s\S]*?)```/g;

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
let count = 0;
const problems: string[] = [];
for (const source of sources) {
  const text = readFileSync(join(root, source), 'utf8');
  let n = 0;
  let preludes = 0;
  for (const match of text.matchAll(BLOCK)) {
    const [whole, prelude, code = ''] = match;
    if (prelude !== undefined) preludes++;
    n++;
    count++;
    // The line of the fence's first code line, so an error in `<source>-<n>.ts` is easy to find in the page.
    const line = text.slice(0, match.index + whole.indexOf('```ts')).split('\n').length + 1;
    const name = `${source.replace(/\.md$/, '').replaceAll('/', '_')}-${n}.ts`;
    // `export {}` makes each snippet a module: top-level await, and no name clashes between snippets.
    writeFileSync(join(out, name), `// ${source}:${line}\n${prelude ?? ''}${code}\nexport {};\n`);
  }
  // A prelude that is not right before a ```ts fence would be silently ignored: say so instead.
  const declared = text.match(/<!-- prelude\n/g)?.length ?? 0;
  if (declared !== preludes) problems.push(`${source}: ${declared - preludes} prelude(s) not right before a \`\`\`ts fence`);
}
// Every example is referenced from README.md or a page of docs/, so that a reader can find it.
const prose = ['README.md', ...docs.map((f) => `docs/${f}`)].map((f) => readFileSync(join(root, f), 'utf8')).join('\n');
for (const example of readdirSync(join(root, 'examples'))) {
  if (!prose.includes(`examples/${example}`)) problems.push(`examples/${example} is referenced from neither README.md nor docs/`);
}
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`${count} snippets from ${sources.length} files in test-artifacts/snippets/`);
