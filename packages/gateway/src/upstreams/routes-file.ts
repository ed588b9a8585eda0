/**
 * The routing file: a JSON or YAML object `{"routes": [...]}`, each route a model pattern and its upstream. Keys are
 * never in the file: a route names the environment variable that holds its key (`keyEnv`), or a preset's own variable
 * is used. Errors say where: the line and column of the bad field, or of the syntax error.
 */
import { PROVIDERS, type ProviderName } from '@ai4ts/core';
import { type Document, isNode, parseDocument } from 'yaml';
import { z } from 'zod';
import type { RouteSpec } from './router.js';

/** What every route has: the model pattern, and the variable holding its key. */
const RouteBase = z.strictObject({ model: z.string().min(1), keyEnv: z.string().min(1).optional() });
const upstreamModel = z.string().min(1).optional();
const onUnsupported = z.enum(['drop', 'refuse']).optional();
const state = z.enum(['gateway', 'upstream']).optional();

const Route = z.union([
  RouteBase.extend({
    provider: z.string().refine((name) => Object.hasOwn(PROVIDERS, name), 'an unknown provider preset'),
    upstreamModel,
    onUnsupported,
    state,
  }),
  RouteBase.extend({ upstream: z.url(), protocol: z.enum(['chat', 'responses', 'messages', 'gemini']), upstreamModel, onUnsupported, state }),
  RouteBase.extend({ upstream: z.url(), dialect: z.enum(['typed', 'named']) }),
]);

const RoutesFile = z.strictObject({ routes: z.array(Route).min(1) });

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
    const upstreamToken = route.keyEnv === undefined ? undefined : env[route.keyEnv]?.trim() || undefined;
    if (route.keyEnv !== undefined && upstreamToken === undefined) throw new Error(`the routing file: ${route.keyEnv} is not set`);
    if ('provider' in route) {
      if (!isProvider(route.provider)) throw new Error(`the routing file: unknown provider ${route.provider}`);
      return {
        model: route.model,
        provider: route.provider,
        upstreamToken,
        upstreamModel: route.upstreamModel,
        ...(route.onUnsupported && { onUnsupported: route.onUnsupported }),
        ...(route.state && { state: route.state }),
      };
    }
    if ('dialect' in route) return { model: route.model, upstream: route.upstream, dialect: route.dialect, upstreamToken };
    return {
      model: route.model,
      upstream: route.upstream,
      protocol: route.protocol,
      upstreamToken,
      upstreamModel: route.upstreamModel,
      ...(route.onUnsupported && { onUnsupported: route.onUnsupported }),
      ...(route.state && { state: route.state }),
    };
  });
}

/**
 * The first issue, looking into a route that matches no kind of route: the issue of the kind it came closest to (the
 * fewest issues), so that `protocol: grpc` is named rather than "invalid input".
 */
function closestIssue(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue | undefined {
  const issue = issues[0];
  if (issue?.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  const closest = closestIssue(issue.errors.reduce((best, next) => (next.length < best.length ? next : best)));
  return closest ? { ...closest, path: [...issue.path, ...closest.path] } : issue;
}

/** `line L, column C` (from 1) of a UTF-16 offset into `text`. */
function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

/** Where the field at `path` is in the file, or its nearest ancestor that exists (a missing key's object). */
function position(document: Document, text: string, path: readonly PropertyKey[]): string | undefined {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = document.getIn(path.slice(0, depth), true);
    if (isNode(node) && node.range) return lineAndColumn(text, node.range[0]);
  }
  return undefined;
}
