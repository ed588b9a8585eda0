#!/usr/bin/env node
// npm run fuzz: the fuzz properties (packages/ai4ts/test/fuzz.test.ts) at scale. `npm test` runs the same
// properties with a bounded budget (30 runs each). AI4TS_FUZZ_RUNS sets the runs per property (default 5000);
// AI4TS_FUZZ_SEED replays the seed fast-check printed for a failure.
import { spawnSync } from 'node:child_process';

const runs = process.env.AI4TS_FUZZ_RUNS ?? '5000';
const { status } = spawnSync('npx', ['vitest', 'run', '--project', 'ai4ts', 'fuzz.test'], {
  stdio: 'inherit',
  env: { ...process.env, AI4TS_FUZZ_RUNS: runs },
});
process.exit(status ?? 1);
