#!/usr/bin/env node
/**
 * `npm run release:check` (CI): the pending changesets make a release the way `npm run version-packages` would.
 * `changeset version` runs on a copy of the workspace manifests and `.changeset/` in a temporary directory (the
 * repo is never touched, no git and no network needed), then every released package must have its new version, a
 * CHANGELOG.md entry for it, and sibling dependencies at `^<the sibling's new version>`. With no pending changeset
 * it only says so.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));
const { workspaces } = readJson(join(root, 'package.json'));

const pending = readdirSync(join(root, '.changeset')).filter((file) => file.endsWith('.md') && file !== 'README.md');
if (pending.length === 0) {
  console.log('release:check: no pending changeset');
  process.exit(0);
}

const copy = mkdtempSync(join(tmpdir(), 'ai4ts-release-'));
try {
  cpSync(join(root, 'package.json'), join(copy, 'package.json'));
  cpSync(join(root, '.changeset'), join(copy, '.changeset'), { recursive: true });
  for (const dir of workspaces) {
    mkdirSync(join(copy, dir), { recursive: true });
    cpSync(join(root, dir, 'package.json'), join(copy, dir, 'package.json'));
  }
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');

  const changeset = spawnSync(join(root, 'node_modules', '.bin', 'changeset'), ['version'], { cwd: copy, encoding: 'utf8' });
  if (changeset.status !== 0) {
    console.log(`${changeset.stdout}${changeset.stderr}`);
    console.log('release:check: changeset version failed');
    process.exit(1);
  }

  const before = new Map(workspaces.map((dir) => [dir, readJson(join(root, dir, 'package.json'))]));
  const after = new Map(workspaces.map((dir) => [dir, readJson(join(copy, dir, 'package.json'))]));
  const versions = new Map([...after.values()].map((pkg) => [pkg.name, pkg.version]));
  const failures = [];
  for (const dir of workspaces) {
    const pkg = after.get(dir);
    const old = before.get(dir).version;
    if (pkg.version !== old) {
      const changelog = join(copy, dir, 'CHANGELOG.md');
      if (!existsSync(changelog) || !readFileSync(changelog, 'utf8').includes(`## ${pkg.version}`)) {
        failures.push(`${pkg.name}: no CHANGELOG.md entry for ${pkg.version}`);
      }
      console.log(`${pkg.name}: ${old} -> ${pkg.version}`);
    }
    for (const kind of ['dependencies', 'peerDependencies']) {
      for (const [name, range] of Object.entries(pkg[kind] ?? {})) {
        const sibling = versions.get(name);
        if (sibling && range !== `^${sibling}`) failures.push(`${pkg.name}: ${kind}.${name} is ${range} after versioning`);
      }
    }
  }
  const leftover = readdirSync(join(copy, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');
  if (leftover.length > 0) failures.push(`changesets not consumed: ${leftover.join(', ')}`);
  for (const failure of failures) console.log(`FAIL ${failure}`);
  if (failures.length > 0) process.exit(1);
  console.log(`release:check: ${pending.length} pending changeset(s) version cleanly, sibling ranges in step`);
} finally {
  rmSync(copy, { recursive: true, force: true });
}
