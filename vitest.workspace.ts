import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AliasOptions } from 'vite';
import type { TestProjectConfiguration } from 'vitest/config';

/**
 * One vitest project per workspace package with tests (every entry of the root package.json's `workspaces` but the
 * test kit, which is their helpers); imported by vitest.config.ts (vitest 4 no longer reads this file by itself).
 * Read from package.json, so a new package is tested without an edit here.
 */
const workspaces: string[] = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).workspaces;
export const packages = workspaces.map((path) => path.replace(/^packages\//, '')).filter((name) => name !== 'test-kit');

const src = (dir: string, entry = 'index') =>
  fileURLToPath(new URL(`./packages/${dir}/src/${entry}.ts`, import.meta.url));

/**
 * Tests import sibling packages by name; these aliases point them at the sources, so `npm test` needs no build.
 * Subpath entries first: an alias matches by prefix. `@ai4ts/<name>` is `packages/<name>/src/index.ts`.
 */
export const alias: AliasOptions = [
  { find: '@ai4ts/core/internal', replacement: src('core', 'internal/index') },
  { find: '@ai4ts/core/json-schema', replacement: src('core', 'json-schema') },
  { find: '@ai4ts/core/bedrock', replacement: src('core', 'bedrock') },
  { find: '@ai4ts/gateway/redis', replacement: src('gateway', 'redis') },
  { find: '@ai4ts/gateway/in-process', replacement: src('gateway', 'in-process') },
  { find: /^@ai4ts\/([a-z-]+)$/, replacement: src('$1') },
  { find: 'ai4ts/json-schema', replacement: src('ai4ts', 'json-schema') },
  { find: 'ai4ts/bedrock', replacement: src('ai4ts', 'bedrock') },
  { find: /^ai4ts$/, replacement: src('ai4ts') },
];

export const projects: TestProjectConfiguration[] = packages.map((name) => ({
  resolve: { alias },
  test: {
    name,
    root: `./packages/${name}`,
    include: ['test/**/*.test.ts'],
    environment: 'node',
    passWithNoTests: false,
  },
}));
