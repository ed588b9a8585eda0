#!/usr/bin/env node
/**
 * No import circle in any package: reads the relative `.js` specifiers of `import ... from` and `export ... from`
 * (type-only ones included: a circle of types is still a circle to read) in packages/*\/src/**\/*.ts, finds every
 * circle with a depth-first search, prints each once, and exits 1 if there is any. Plain node, no dependency.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = join(ROOT, 'packages');

/** `import`/`export` statements with a `from '...'`, across lines; and bare `import '...'`. */
const SPECIFIER = /(?:^|[;\n])\s*(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]|(?:^|[;\n])\s*import\s*['"]([^'"]+)['"]/g;

function filesUnder(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Comments out, so that an import named in a comment is not read as one. */
function withoutComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** The module graph: each file and the files its relative `.js` specifiers name. */
function graphOf(files) {
  const known = new Set(files);
  const graph = new Map();
  for (const file of files) {
    const edges = new Set();
    for (const match of withoutComments(readFileSync(file, 'utf8')).matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2];
      if (!specifier?.startsWith('.') || !specifier.endsWith('.js')) continue;
      edges.add(resolve(dirname(file), specifier).replace(/\.js$/, '.ts'));
    }
    graph.set(file, [...edges].filter((target) => known.has(target)));
  }
  return graph;
}

/** Every elementary circle found by a depth-first search (one per back edge), each named from its smallest file. */
function cyclesOf(graph) {
  const state = new Map(); // undefined: unseen, 1: on the path, 2: done
  const path = [];
  const found = new Map();
  const visit = (file) => {
    state.set(file, 1);
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 1) {
        const cycle = path.slice(path.indexOf(next));
        const start = cycle.indexOf([...cycle].sort()[0]);
        const rotated = [...cycle.slice(start), ...cycle.slice(0, start)];
        found.set(rotated.join('\n'), rotated);
      } else if (state.get(next) === undefined) visit(next);
    }
    path.pop();
    state.set(file, 2);
  };
  for (const file of graph.keys()) if (state.get(file) === undefined) visit(file);
  return [...found.values()];
}

const packages = readdirSync(PACKAGES).filter((name) => statSync(join(PACKAGES, name, 'src'), { throwIfNoEntry: false })?.isDirectory());
const cycles = packages.flatMap((name) => cyclesOf(graphOf(filesUnder(join(PACKAGES, name, 'src')))));
for (const cycle of cycles) {
  const names = cycle.map((file) => relative(ROOT, file));
  console.error(`import circle: ${[...names, names[0]].join(' -> ')}`);
}
if (cycles.length > 0) {
  console.error(`${cycles.length} import circle(s) in packages/*/src`);
  process.exit(1);
}
console.log(`no import circle in ${packages.length} packages`);
