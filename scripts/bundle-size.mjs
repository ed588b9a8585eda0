/**
 * Browser bundle budgets (CI, after `npm run build`). Each browser-safe package is bundled the way an app would,
 * `export * from '<package>'` (its whole public surface, its dependencies and peers included), by esbuild for the
 * browser platform, minified; the gzipped size must stay within its budget. A `node:` import anywhere in a
 * browser-safe package fails the bundle, and so does `@opentelemetry/api` or `google-auth-library` in it (optional
 * peers, loaded at run time). `--json` prints the measurements as JSON.
 */
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const KB = 1024;
/**
 * Gzipped bytes, minified, for the browser: issue 13's numbers for sse (4 KB), chat (25 KB) and ai4ts (50 KB); the
 * others about 5% above their size when set. zod stays at the request boundary (zod/mini: zod's core classes for
 * the few schema kinds the request checks use: 6 KB, a quarter of @ai4ts/chat), with the checks' own English messages
 * rather than zod's locale. @opentelemetry/api stays out of bundles, and JSON Schema tools (@cfworker/json-schema)
 * are in the `json-schema` subpaths. esbuild's metafile (`outputs[...].inputs[path].bytesInOutput`) says where the
 * bytes are. Chat's 25 KB became 25.1 KB with issue 24: the listeners' shared base keeps each stream's fields in one
 * state object (reset replaces it whole), and property names survive minification where private fields did not
 * (+190 B gzip in every protocol bundle); folding the loop entry points and the one-step output call into
 * ProtocolService won back 60 B of it. Core's 28 KB became 29 KB with Vertex AI (issue 28): expiring access tokens in
 * the Transport (cache, shared fetch, renewal on a 401) and the `vertex()` preset (0.7 KB of it) are about 1.2 KB;
 * an app that imports neither carries only the Transport's part (google-auth-library stays out, see below).
 * Gemini (issue 28): a definition's `endpoint` (a path that depends on the request and the body it sends) costs
 * every protocol bundle about 100 B (chat 25.1 -> 25.2 KB); @ai4ts/gemini is 24.5 KB, and the front door, which
 * carries the fourth protocol, grew from 50 to 52.4 KB (56.5 KB with issue 31 below). Issue 31 (stop conditions, approvals and mixed passthrough:
 * suspending a loop to a checked JSON state and resuming it) is in every protocol's loop, so in every bundle:
 * +2.5 KB gzip each (the state's checks and messages 1.5 KB, the stop conditions and the engine's resume path the
 * rest); zod stays out of core. Issue 26's SDK hardening adds about 1 KB to core and 0.3-0.6 KB to each protocol:
 * the known request fields of each protocol and `strictRequests`' nearest-name suggestion, spans' content-free
 * failure descriptions, and the content-type and baseURL checks that make errors explain themselves; Gemini's span
 * attributes (issue 28) are in core's telemetry. In-process translation (issue 31, `translate: true`) costs the front
 * door 0.5 KB (a Transport per untranslated protocol, the in-process preset and the lazy loader; the gateway's codecs
 * stay out, loaded by a name in a variable) and core 60 B (`ResultInfo.dropped`). Issue 25: the Responses loop resends
 * the whole conversation to a server that keeps nothing (a response saying `store: false`, a 400/404 naming
 * `previous_response_id`), through `stepFailed` in ProtocolService's loop adapter: responses 30 -> 30.2 KB, the front
 * door +0.2 KB. Sse's 4 KB became 4.6 KB with Amazon Bedrock (issue 30): AWS's binary event-stream framing (prelude,
 * ten header types, CRC-32 with its table built on first use, `parseEventStream`) is a second decoder beside the SSE
 * one, about 0.5 KB gzip; an app that imports only the SSE names does not carry it (tree-shaken). Core's 32.5 KB
 * became 33 KB and the front door's 58.6 KB 59 KB with the Transport's part of Bedrock: a preset's request signer
 * (signing each attempt, its secrets redacted) and a stream framing other than SSE, about 0.3 KB; the Bedrock preset,
 * the SigV4 signer (aws4fetch, 3.2 KB gzip) and the event-stream reading are in the `bedrock` subpaths, outside these
 * bundles. Embeddings and rerank (issue 30) are core's: `createEmbeddings`, `embedMany` (batches, bounded
 * concurrency, partial results), `rerank`, the answers' boundary checks (one vector per input, each index once), the
 * base64 float32 decoder and `cosineSimilarity`/`topK`, about 1.8 KB gzip in core's and the front door's bundles
 * (core 33 -> 35 KB, ai4ts 59.8 -> 61.7 KB); the protocol bundles do not carry them (tree-shaken: only the presets'
 * `embeddingBatchSize` numbers reach them). Bedrock's Converse API (issue 30) is the fifth protocol, @ai4ts/converse:
 * its listener, loop turns and definition over core's ProtocolService, about 1.7 KB gzip in the front door, which
 * carries every protocol (61.7 -> 63.6 KB); its own bundle is mostly core's loop engine, like Gemini's. The Bedrock
 * preset's Converse event frames are in the `bedrock` subpaths, outside these bundles.
 */
const BUDGETS = {
  '@ai4ts/sse': 4.6 * KB,
  '@ai4ts/core': 35 * KB,
  '@ai4ts/chat': 28.4 * KB,
  '@ai4ts/responses': 30.2 * KB,
  '@ai4ts/messages': 28.8 * KB,
  '@ai4ts/gemini': 27.4 * KB,
  '@ai4ts/converse': 27.3 * KB,
  ai4ts: 63.6 * KB,
};

/** Optional peers of core (and their scope), imported by a name in a variable only when used. */
const OPTIONAL_PEERS = ['@opentelemetry/', 'google-auth-library/'];

const rows = [];
let failed = false;
for (const [name, budget] of Object.entries(BUDGETS)) {
  let result;
  try {
    result = await build({
      stdin: { contents: `export * from '${name}';`, resolveDir: process.cwd(), loader: 'js' },
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      write: false,
      metafile: true,
      logLevel: 'silent',
      // The root tsconfig maps the packages to their sources (for tests); measure the built dist, as published.
      tsconfigRaw: '{}',
    });
  } catch (error) {
    // esbuild cannot resolve `node:` modules for the browser platform: the package is not browser-safe.
    const messages = (error.errors ?? [error]).map((e) => e.text ?? String(e));
    console.error(`${name}: does not bundle for the browser:\n  ${messages.join('\n  ')}`);
    failed = true;
    continue;
  }
  const inputs = Object.keys(result.metafile.inputs);
  const nodeImports = inputs.filter((path) => path.startsWith('node:'));
  if (nodeImports.length > 0) {
    console.error(`${name}: imports ${nodeImports.join(', ')}`);
    failed = true;
  }
  // The optional peers are loaded at run time (telemetry on, Google credentials asked for); a bundle of an app that
  // never uses them must not carry them (nor fail to build without them installed).
  for (const peer of OPTIONAL_PEERS) {
    const bundled = inputs.find((path) => path.includes(`node_modules/${peer}`));
    if (bundled) {
      console.error(`${name}: bundles the optional peer ${peer.replace(/\/$/, '')} (${bundled})`);
      failed = true;
    }
  }
  const code = result.outputFiles[0].contents;
  const gzip = gzipSync(code, { level: 9 }).length;
  const over = gzip > budget;
  if (over) failed = true;
  rows.push({ name, minified: code.length, gzip, budget, ok: !over });
}

if (process.argv.includes('--json')) {
  console.log(JSON.stringify(rows, null, 2));
} else {
  const kb = (bytes) => `${(bytes / KB).toFixed(1)} KB`;
  console.log('| package | minified | gzip | budget (gzip) |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const row of rows) {
    console.log(`| ${row.name} | ${kb(row.minified)} | ${kb(row.gzip)} | ${kb(row.budget)}${row.ok ? '' : ' OVER'} |`);
  }
}
if (failed) {
  console.error('bundle budgets: FAILED');
  process.exit(1);
}
