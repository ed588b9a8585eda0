#!/usr/bin/env node
/**
 * `npm run pack:check`: the packages as npm would publish them, used the way a new project would use them. Needs no
 * earlier `npm run build`: each package's `prepack` builds it, as `npm pack` and `npm publish` in its folder do.
 *
 * 1. `npm pack` every workspace into a temporary directory (its `prepack` builds it first).
 * 2. Each tarball: `dist/` inside, no `src/` and no source map; the manifest (sibling dependencies are semver ranges the sibling's version satisfies, never `*`
 *    or `file:`; `repository`, `homepage`, `license`, `engines`; no `private`), LICENSE and README.md inside, then
 *    publint and @arethetypeswrong/cli on the tarball itself.
 * 3. A fresh project outside the repo (no workspace) installs the tarballs alone, plus zod; the other dependencies
 *    come from npm's cache that `npm ci` filled (`--prefer-offline`), or the registry. No @opentelemetry/api.
 * 4. The README example runs there against the embedded scripted model (@ai4ts/testing on 127.0.0.1): once as an
 *    ES module (typechecked first under `module: nodenext`, with `skipLibCheck` on and off), once through `require()`
 *    (Node 20.19+), and the installed `ai4ts-gateway --version` (and `ai4ts-proxy`, its old name) answers the packed version.
 *
 * `--keep` leaves the temporary directory for a look. Exit 1 on any failure, with every failure listed.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const keep = process.argv.includes('--keep');
const work = mkdtempSync(join(tmpdir(), 'ai4ts-pack-'));
const failures = [];
const fail = (message) => {
  failures.push(message);
  console.log(`FAIL ${message}`);
};

/** Runs a command; its output is shown only when it fails (or always, with `show`). */
function run(command, args, { cwd = root, show = false } = {}) {
  const child = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } });
  const output = `${child.stdout ?? ''}${child.stderr ?? ''}`.trim();
  if (show || child.status !== 0) console.log(output);
  return { ok: child.status === 0, stdout: child.stdout ?? '', output };
}

const bin = (name) => join(root, 'node_modules', '.bin', name);
const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));

// 1. Pack every workspace.
// The published workspaces: a private one (the test kit) is never built nor packed.
const workspaces = readJson(join(root, 'package.json')).workspaces.filter(
  (dir) => !readJson(join(root, dir, 'package.json')).private,
);
const manifests = workspaces.map((dir) => readJson(join(root, dir, 'package.json')));
const versions = new Map(manifests.map((pkg) => [pkg.name, pkg.version]));
const tarballDir = join(work, 'tarballs');
mkdirSync(tarballDir);
const packed = run('npm', ['pack', '--json', '--pack-destination', tarballDir, ...manifests.flatMap((p) => ['-w', p.name])]);
if (!packed.ok) {
  console.log('pack:check: npm pack failed (its prepack builds each package: see the build errors above)');
  process.exit(1);
}
const tarballs = JSON.parse(packed.stdout);

// 2. Each tarball on its own. Every package that takes user schemas peers the same zod range as ai4ts.
const zodRange = manifests.find((p) => p.name === 'ai4ts').peerDependencies.zod;
for (const tarball of tarballs) {
  const pkg = manifests.find((p) => p.name === tarball.name);
  const path = join(tarballDir, tarball.filename);
  const files = new Set(tarball.files.map((f) => f.path));
  const failed = failures.length;
  if (!files.has(pkg.types.replace(/^\.\//, ''))) fail(`${pkg.name}: ${pkg.types} is not in the tarball (not built?)`);
  const extra = [...files].filter((file) => file.startsWith('src/') || file.endsWith('.map'));
  if (extra.length > 0) fail(`${pkg.name}: the tarball carries sources or source maps: ${extra.slice(0, 3).join(', ')}`);
  for (const file of ['LICENSE', 'README.md', 'package.json']) {
    if (!files.has(file)) fail(`${pkg.name}: ${file} is not in the tarball`);
  }
  if (pkg.private) fail(`${pkg.name}: is private`);
  if (!pkg.repository?.url || pkg.repository.directory !== workspaces[manifests.indexOf(pkg)]) {
    fail(`${pkg.name}: repository.url and repository.directory must name the repo and the package's folder`);
  }
  for (const field of ['homepage', 'license', 'description']) if (!pkg[field]) fail(`${pkg.name}: no ${field}`);
  if (!pkg.engines?.node) fail(`${pkg.name}: no engines.node`);
  const zod = pkg.peerDependencies?.zod;
  if (zod && zod !== zodRange) fail(`${pkg.name}: peerDependencies.zod is "${zod}", the others say "${zodRange}"`);
  // A sibling is depended on as ^<its version>, which the release tooling (changesets) keeps in step.
  for (const kind of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    for (const [name, range] of Object.entries(pkg[kind] ?? {})) {
      const sibling = versions.get(name);
      if (sibling && range !== `^${sibling}`) fail(`${pkg.name}: ${kind}.${name} is "${range}", not "^${sibling}"`);
      if (!sibling && (range === '*' || range === '' || /^(file|link|workspace):/.test(range))) {
        fail(`${pkg.name}: ${kind}.${name} is "${range}", not a published semver range`);
      }
    }
  }
  if (!run(bin('publint'), ['run', '--strict', path]).ok) fail(`${pkg.name}: publint`);
  // require() of these ES modules works on Node 20.19+ and 22.12+ (step 4 proves it), which attw's node16-from-CJS
  // model predates; node10 resolution cannot see subpath exports. Everything else attw checks must be clean.
  const attw = run(bin('attw'), ['--profile', 'node16', '--ignore-rules', 'cjs-resolves-to-esm', '--format', 'ascii', path]);
  if (!attw.ok) fail(`${pkg.name}: @arethetypeswrong/cli`);
  if (failures.length === failed) console.log(`ok   ${tarball.filename}: ${files.size} files, ${(tarball.size / 1024).toFixed(0)} KB packed`);
}

// 3. A fresh project that installs the tarballs alone.
const app = join(work, 'app');
mkdirSync(app);
writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'pack-check-app', private: true, type: 'module' }));
// A Node project has Node's types (@ai4ts/testing's server is typed with node:http).
const nodeTypes = `@types/node@${readJson(join(root, 'package.json')).devDependencies['@types/node']}`;
const install = run(
  'npm',
  ['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs.map((t) => join(tarballDir, t.filename)), `zod@${zodRange}`, nodeTypes],
  { cwd: app },
);
if (!install.ok) {
  fail('npm install of the tarballs into a fresh project');
} else {
  console.log(`ok   a fresh project installed the ${tarballs.length} tarballs and zod@${zodRange}`);
  smoke(app);
}

// 4. The README example, against the scripted model.
function smoke(app) {
  const resolveFromApp = createRequire(join(app, 'package.json')).resolve;
  try {
    resolveFromApp('@opentelemetry/api');
    fail('@opentelemetry/api was installed, but it is an optional peer');
  } catch {}

  // The README's request code, with the client pointed at the scripted model, which answers each protocol with two
  // tool calls, then the text. Plain JavaScript, so that the ESM and the CommonJS program share it; tsc checks both.
  const program = (imports, run) => `// @ts-check
${imports}

const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, celsius: city === 'Paris' ? 19 : 21 }),
});
const question = 'Is it warmer in Paris or in Zürich?';
const answer = 'Zürich is warmer: 21 °C against 19 °C.';
/** @type {import('@ai4ts/testing').MockTurn} */
const callWeather = {
  toolCalls: [
    { name: 'get_weather', arguments: { city: 'Paris' } },
    { name: 'get_weather', arguments: { city: 'Zürich' } },
  ],
};

async function main() {
  const server = await startMockModel({ script: [callWeather, { content: answer }, callWeather, { content: answer }, callWeather, { content: answer }] });
  try {
    const openai = new Ai4ts({ baseURL: server.baseURL, apiKey: 'pack-check' });
    const chat = await openai.chat.create({
      model: 'mock-model',
      messages: [{ role: 'user', content: question }],
      tools: [getWeather],
    });
    const responses = await openai.responses.create({ model: 'mock-model', input: question, tools: [getWeather] });
    const anthropic = new Ai4ts({ baseURL: server.baseURL, apiKey: 'pack-check' });
    const stream = anthropic.messages.stream({
      model: 'mock-model',
      max_tokens: 1024,
      messages: [{ role: 'user', content: question }],
      tools: [getWeather],
    });
    const results = [];
    let streamed = '';
    for await (const event of stream) {
      if (event.type === 'content') streamed += event.delta;
      if (event.type === 'tool.result') results.push(event.output);
    }
    const messages = await stream.final();
    const texts = [chat.text, responses.text, messages.text, streamed];
    if (texts.some((text) => text !== answer)) throw new Error(\`unexpected texts: \${JSON.stringify(texts)}\`);
    if (results.length !== 2) throw new Error(\`expected two tool results, got \${JSON.stringify(results)}\`);
    const steps = [chat.steps.length, responses.steps.length, messages.steps.length];
    if (steps.some((n) => n !== 2)) throw new Error(\`expected two steps each, got \${steps.join(', ')}\`);
    if (server.requests.length !== 6) throw new Error(\`expected six model requests, got \${server.requests.length}\`);
    console.log(\`chat, responses and messages ran the tool loop: \${texts[0]}\`);
  } finally {
    await server.close();
  }
}
${run}
`;
  writeFileSync(
    join(app, 'esm.mjs'),
    program(
      "import { startMockModel } from '@ai4ts/testing';\nimport { Ai4ts, defineTool } from 'ai4ts';\nimport * as z from 'zod';",
      'await main();',
    ),
  );
  writeFileSync(
    join(app, 'cjs.cjs'),
    program(
      "const { startMockModel } = require('@ai4ts/testing');\nconst { Ai4ts, defineTool } = require('ai4ts');\nconst z = require('zod');",
      'main().catch((error) => {\n  console.error(error);\n  process.exitCode = 1;\n});',
    ),
  );
  // The types as a TypeScript user sees them from the installed packages (node_modules, not the repo's sources):
  // once with skipLibCheck as `tsc --init` sets it, once with the declarations checked too, as a project with
  // `skipLibCheck: false` has them (none may name the optional peer @opentelemetry/api, which is not installed here).
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  for (const skipLibCheck of [true, false]) {
    const compilerOptions = { module: 'nodenext', target: 'es2022', strict: true, noEmit: true, allowJs: true, checkJs: true, skipLibCheck };
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['esm.mjs', 'cjs.cjs'] }));
    const how = `module: nodenext, ESM and CJS, skipLibCheck: ${skipLibCheck}`;
    if (run(process.execPath, [tsc, '-p', app], { cwd: app }).ok) {
      console.log(`ok   the README example typechecks against the installed packages (${how})`);
    } else {
      fail(`the README example does not typecheck against the installed packages (${how})`);
    }
  }

  for (const [file, how] of [
    ['esm.mjs', 'import'],
    ['cjs.cjs', 'require()'],
  ]) {
    const ran = run(process.execPath, [file], { cwd: app });
    if (ran.ok) console.log(`ok   README example through ${how}: ${ran.stdout.trim()}`);
    else fail(`the README example through ${how}`);
  }

  // ai4ts-proxy is the gateway's old name, kept as a second bin for one release.
  for (const name of ['ai4ts-gateway', 'ai4ts-proxy']) {
    const version = run(join(app, 'node_modules', '.bin', name), ['--version'], { cwd: app });
    if (version.stdout.trim() === versions.get('@ai4ts/gateway')) console.log(`ok   ${name} --version: ${version.stdout.trim()}`);
    else fail(`${name} --version printed "${version.output}"`);
  }
}

if (!keep) rmSync(work, { recursive: true, force: true });
else console.log(`kept ${work}`);
if (failures.length > 0) {
  console.log(`pack:check: ${failures.length} failure(s)`);
  process.exit(1);
}
console.log(`pack:check: ${tarballs.length} packages pack, lint clean and run from their tarballs alone`);
