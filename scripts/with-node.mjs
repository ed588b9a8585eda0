#!/usr/bin/env node
/**
 * Runs a command under another Node major: `node scripts/with-node.mjs 24 npx vitest run`.
 *
 * The binary comes from the npm registry's `node` package (`npm install node@24` brings the platform's binary as an
 * npm package; nothing is downloaded from elsewhere), installed once into `$AI4TS_NODE_CACHE/<major>` (default
 * `~/.cache/ai4ts-node/<major>`, outside the repo) and reused. The command runs with that binary first on PATH, so
 * `node`, `npx` and every child process a test spawns through PATH or `process.execPath` run on it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

const [major, command, ...args] = process.argv.slice(2);
if (!/^\d+$/.test(major ?? '') || !command) {
  console.error('usage: node scripts/with-node.mjs <major> <command> [args...]');
  process.exit(2);
}

const dir = join(process.env.AI4TS_NODE_CACHE ?? join(homedir(), '.cache', 'ai4ts-node'), major);
const bin = join(dir, 'node_modules', '.bin');
if (!existsSync(join(bin, 'node'))) {
  mkdirSync(dir, { recursive: true });
  console.log(`with-node: installing node@${major} from the npm registry into ${dir}`);
  const install = spawnSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', `node@${major}`], {
    stdio: 'inherit',
  });
  if (install.status !== 0 || !existsSync(join(bin, 'node'))) {
    console.error(`with-node: could not install node@${major}`);
    process.exit(1);
  }
}

const env = { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH}` };
const version = spawnSync(join(bin, 'node'), ['--version'], { encoding: 'utf8' }).stdout.trim();
if (!version.startsWith(`v${major}.`)) {
  console.error(`with-node: ${join(bin, 'node')} is ${version || 'broken'}, not Node ${major}`);
  process.exit(1);
}
console.log(`with-node: Node ${version}: ${[command, ...args].join(' ')}`);
const child = spawnSync(command, args, { stdio: 'inherit', env });
process.exit(child.status ?? 1);
