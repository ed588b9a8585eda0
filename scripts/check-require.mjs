#!/usr/bin/env node
// Every package is ESM-first; a CommonJS user on Node 20.19+ (or 22.12+) can still require() it, because each
// exports entry has a `default` condition. This spawns `node -e "require('<entry>')"` for every entry of every
// workspace's exports map (core's ./internal too), against the built dist/ (run `npm run build` first), and
// checks that require() gives the same named exports as import(). One line per entry; exit 1 if any fails.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// require(esm) without a flag: Node 20.19+, 22.12+ and 23+ (never 21).
const [major, minor] = process.versions.node.split('.').map(Number);
const supported = major >= 23 || (major === 22 && minor >= 12) || (major === 20 && minor >= 19);
if (!supported) {
  console.log(`check-require: skipped, Node ${process.versions.node} cannot require() ES modules (needs 20.19+ or 22.12+)`);
  process.exit(0);
}

const { workspaces } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const entries = [];
for (const dir of workspaces) {
  const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
  if (pkg.private) continue; // a private workspace (the test kit) is never built nor published
  for (const subpath of Object.keys(pkg.exports ?? { '.': pkg.main })) entries.push(`${pkg.name}${subpath.slice(1)}`);
}

// The child prints the sorted named exports seen by require() and by import(), as JSON.
const probe = `
const spec = process.argv[1];
const required = require(spec);
import(spec).then((imported) => {
  const names = (m) => Object.keys(m).filter((k) => k !== 'default' && k !== 'module.exports').sort();
  process.stdout.write(JSON.stringify({ required: names(required), imported: names(imported) }));
});`;

let failed = 0;
for (const specifier of entries) {
  const child = spawnSync(process.execPath, ['-e', probe, specifier], { cwd: root, encoding: 'utf8' });
  if (child.status !== 0) {
    failed++;
    const reason = child.stderr.split('\n').find((line) => /Error|ERR_/.test(line)) ?? child.stderr.trim();
    console.log(`FAIL ${specifier}: require() threw: ${reason}`);
    continue;
  }
  const { required, imported } = JSON.parse(child.stdout);
  const missing = imported.filter((name) => !required.includes(name));
  if (missing.length > 0 || required.length === 0) {
    failed++;
    console.log(`FAIL ${specifier}: require() lacks ${missing.join(', ') || 'every export'}`);
    continue;
  }
  const warned = child.stderr.includes('ExperimentalWarning') ? ' (Node warns: experimental)' : '';
  console.log(`ok   require('${specifier}'): ${required.length} exports, as import() sees them${warned}`);
}
if (failed > 0) {
  console.log(`check-require: ${failed} of ${entries.length} entries cannot be require()d`);
  process.exit(1);
}
console.log(`check-require: all ${entries.length} entries can be require()d on Node ${process.versions.node}`);
