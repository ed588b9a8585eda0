/**
 * The routing file: a JSON or YAML object `{"routes": [...]}`, each route a model pattern and its upstream (or its
 * `upstreams`, with a strategy and a cooldown: upstreams/pool.ts). Keys are
 * never in the file: a route names the environment variable that holds its key (`keyEnv`), or a preset's own variable
 * is used. Errors say where: the line and column of the bad field, or of the syntax error.
 */
import { PROVIDERS, type ProviderName } from '@ai4ts/core';
import { type Document, isNode, parseDocument } from 'yaml';
import { z } from 'zod';
import type { RouteSpec } from './router.js';
import type { UpstreamSpec } from './targets.js';

const upstreamModel = z.string().min(1).optional();
const onUnsupported = z.enum(['drop', 'refuse']).optional();
const state = z.enum(['gateway', 'upstream']).optional();

/** The three kinds of upstream (a preset, a URL and its protocol, a daemon), each with `base`'s fields. */
function upstreamOf<Shape extends z.core.$ZodLooseShape>(base: z.ZodObject<Shape, z.core.$strict>) {
  return z.union([
    base.extend({
      provider: z.string().refine((name) => Object.hasOwn(PROVIDERS, name), 'an unknown provider preset'),
      upstreamModel,
      onUnsupported,
      state,
    }),
    base.extend({ upstream: z.url(), protocol: z.enum(['chat', 'responses', 'messages', 'gemini']), upstreamModel, onUnsupported, state }),
    base.extend({ upstream: z.url(), dialect: z.enum(['typed', 'named']) }),
  ]);
}

/** The variable holding an upstream's key. */
const keyEnv = z.string().min(1).optional();
const model = z.string().min(1);

/** One upstream of a route with several: its name and weight besides. */
const PoolUpstream = upstreamOf(z.strictObject({ keyEnv, name: z.string().min(1).optional(), weight: z.number().positive().optional() }));

const PoolRoute = z.strictObject({
  model,
  upstreams: z
    .array(PoolUpstream)
    .min(1)
    .refine((upstreams) => {
      const names = upstreams.flatMap((upstream) => upstream.name ?? []);
      return new Set(names).size === names.length;
    }, 'two upstreams have the same name'),
  strategy: z.enum(['priority', 'weighted', 'least-busy', 'latency']).optional(),
  cooldown: z
    .strictObject({ failures: z.int().positive().optional(), window: z.number().positive().optional(), duration: z.number().positive().optional() })
    .optional(),
});

/** A route with one upstream. */
const SingleRoute = upstreamOf(z.strictObject({ model, keyEnv }));

// One union of the four, not a union in a union: the closest kind is then the one whose error is named.
const Route = z.union([...SingleRoute.options, PoolRoute]);

const RoutesFile = z.strictObject({ routes: z.array(Route).min(1) });

/** One upstream as the file writes it: a route's own, or one of its `upstreams`. */
type FileUpstream = z.infer<typeof SingleRoute> | z.infer<typeof PoolUpstream>;

function isProvider(name: string): name is ProviderName {
  return Object.hasOwn(PROVIDERS, name);
}

/** How a routing file is written: chosen by its extension (`.yaml` / `.yml`, else JSON). */
export type RoutesFormat = 'json' | 'yaml';

export function routesFormatOf(path: string): RoutesFormat {
  return /\.ya?ml$/i.test(path) ? 'yaml' : 'json';
}

/**
 * Reads a routing file's text into routes, keys taken from `env`. Throws an Error naming the first bad field and
 * where it is (and never a value read from the environment).
 */
export function readRoutes(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  format: RoutesFormat = 'json',
): RouteSpec[] {
  let document: Document | undefined;
  let value: unknown;
  if (format === 'yaml') {
    document = parseDocument(text);
    const error = document.errors[0];
    if (error) {
      // The parser's message ends with its own position and an excerpt of the file: keep the first sentence.
      const message = error.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '');
      throw new Error(`the routing file is not YAML (${lineAndColumn(text, error.pos[0])}): ${message}`);
    }
    value = document.toJS();
  } else {
    try {
      value = JSON.parse(text);
    } catch (error) {
      const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ');
      // Node 20 names the position only for some errors; the YAML parser finds most others.
      const offset = Number(/at position (\d+)/.exec(message)?.[1] ?? parseDocument(text).errors[0]?.pos[0] ?? Number.NaN);
      const at = Number.isNaN(offset) ? '' : ` (${lineAndColumn(text, offset)})`;
      throw new Error(`the routing file is not JSON${at}: ${message}`);
    }
  }
  const parsed = RoutesFile.safeParse(value);
  if (!parsed.success) {
    const issue = closestIssue(parsed.error.issues);
    const path = issue?.path ?? [];
    // JSON is YAML too: its document gives the field's position.
    const at = position(document ?? parseDocument(text), text, path);
    throw new Error(`the routing file: ${path.map(String).join('.') || 'root'}${at ? ` (${at})` : ''}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data.routes.map((route): RouteSpec => {
    if (!('upstreams' in route)) return { model: route.model, ...specOf(route, env) };
    return {
      model: route.model,
      upstreams: route.upstreams.map((upstream) => ({
        ...specOf(upstream, env),
        ...(upstream.name !== undefined && { name: upstream.name }),
        ...(upstream.weight !== undefined && { weight: upstream.weight }),
      })),
      ...(route.strategy && { strategy: route.strategy }),
      ...(route.cooldown && { cooldown: route.cooldown }),
    };
  });
}

/** One upstream of the file as the gateway's spec, its key read from the variable it names. */
function specOf(upstream: FileUpstream, env: Readonly<Record<string, string | undefined>>): UpstreamSpec {
  const upstreamToken = upstream.keyEnv === undefined ? undefined : env[upstream.keyEnv]?.trim() || undefined;
  if (upstream.keyEnv !== undefined && upstreamToken === undefined) throw new Error(`the routing file: ${upstream.keyEnv} is not set`);
  if ('provider' in upstream) {
    if (!isProvider(upstream.provider)) throw new Error(`the routing file: unknown provider ${upstream.provider}`);
    return {
      provider: upstream.provider,
      upstreamToken,
      upstreamModel: upstream.upstreamModel,
      ...(upstream.onUnsupported && { onUnsupported: upstream.onUnsupported }),
      ...(upstream.state && { state: upstream.state }),
    };
  }
  if ('dialect' in upstream) return { upstream: upstream.upstream, dialect: upstream.dialect, upstreamToken };
  return {
    upstream: upstream.upstream,
    protocol: upstream.protocol,
    upstreamToken,
    upstreamModel: upstream.upstreamModel,
    ...(upstream.onUnsupported && { onUnsupported: upstream.onUnsupported }),
    ...(upstream.state && { state: upstream.state }),
  };
}

/**
 * The first issue, looking into a route that matches no kind of route: the issue of the kind it came closest to (the
 * fewest issues), so that `protocol: grpc` is named rather than "invalid input".
 */
export function closestIssue(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue | undefined {
  const issue = issues[0];
  if (issue?.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  const closest = closestIssue(issue.errors.reduce((best, next) => (next.length < best.length ? next : best)));
  return closest ? { ...closest, path: [...issue.path, ...closest.path] } : issue;
}

/** `line L, column C` (from 1) of a UTF-16 offset into `text`. */
export function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

/** Where the field at `path` is in the file, or its nearest ancestor that exists (a missing key's object). */
export function position(document: Document, text: string, path: readonly PropertyKey[]): string | undefined {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = document.getIn(path.slice(0, depth), true);
    if (isNode(node) && node.range) return lineAndColumn(text, node.range[0]);
  }
  return undefined;
}
