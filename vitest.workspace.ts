import { fileURLToPath } from 'node:url';
import type { TestProjectConfiguration } from 'vitest/config';

/** One vitest project per package; imported by vitest.config.ts (vitest 4 no longer reads this file by itself). */
export const packages = ['sse', 'core', 'chat', 'responses', 'messages', 'mcp', 'bridge', 'gateway', 'testing', 'ai4ts'] as const;

const src = (dir: string, entry = 'index') =>
  fileURLToPath(new URL(`./packages/${dir}/src/${entry}.ts`, import.meta.url));

/** Tests import sibling packages by name; these aliases point them at the sources, so `npm test` needs no build. */
export const alias = {
  // Before '@ai4ts/core': an alias matches by prefix.
  '@ai4ts/core/internal': src('core', 'internal/index'),
  '@ai4ts/core/json-schema': src('core', 'json-schema'),
  '@ai4ts/sse': src('sse'),
  '@ai4ts/core': src('core'),
  '@ai4ts/chat': src('chat'),
  '@ai4ts/responses': src('responses'),
  '@ai4ts/messages': src('messages'),
  '@ai4ts/mcp': src('mcp'),
  '@ai4ts/bridge': src('bridge'),
  '@ai4ts/gateway/redis': src('gateway', 'redis'),
  '@ai4ts/gateway': src('gateway'),
  '@ai4ts/testing': src('testing'),
  '@ai4ts/test-kit': src('test-kit'),
  'ai4ts/json-schema': src('ai4ts', 'json-schema'),
  ai4ts: src('ai4ts'),
};

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
