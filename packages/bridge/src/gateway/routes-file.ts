/**
 * The routing file: a JSON object `{"routes": [...]}`, each route a model pattern and its upstream. Keys are never in
 * the file: a route names the environment variable that holds its key (`keyEnv`), or a preset's own variable is used.
 */
import { PROVIDERS, type ProviderName } from '@ai4ts/core';
import { z } from 'zod';
import type { RouteSpec } from './upstreams.js';

const Route = z.union([
  z.strictObject({
    model: z.string().min(1),
    provider: z.string().refine((name) => Object.hasOwn(PROVIDERS, name), 'an unknown provider preset'),
    keyEnv: z.string().min(1).optional(),
    upstreamModel: z.string().min(1).optional(),
  }),
  z.strictObject({
    model: z.string().min(1),
    upstream: z.url(),
    protocol: z.enum(['chat', 'responses', 'messages']),
    keyEnv: z.string().min(1).optional(),
    upstreamModel: z.string().min(1).optional(),
  }),
  z.strictObject({
    model: z.string().min(1),
    upstream: z.url(),
    dialect: z.enum(['typed', 'named']),
    keyEnv: z.string().min(1).optional(),
  }),
]);

const RoutesFile = z.strictObject({ routes: z.array(Route).min(1) });

function isProvider(name: string): name is ProviderName {
  return Object.hasOwn(PROVIDERS, name);
}

/**
 * Reads a routing file's text into routes, keys taken from `env`. Throws an Error naming the first bad field (and
 * never a value read from the environment).
 */
export function readRoutes(text: string, env: Readonly<Record<string, string | undefined>>): RouteSpec[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('the routing file is not JSON');
  }
  const parsed = RoutesFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`the routing file: ${issue?.path.join('.') || 'root'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data.routes.map((route): RouteSpec => {
    const upstreamToken = route.keyEnv === undefined ? undefined : env[route.keyEnv]?.trim() || undefined;
    if (route.keyEnv !== undefined && upstreamToken === undefined) throw new Error(`the routing file: ${route.keyEnv} is not set`);
    if ('provider' in route) {
      if (!isProvider(route.provider)) throw new Error(`the routing file: unknown provider ${route.provider}`);
      return { model: route.model, provider: route.provider, upstreamToken, upstreamModel: route.upstreamModel };
    }
    if ('dialect' in route) return { model: route.model, upstream: route.upstream, dialect: route.dialect, upstreamToken };
    return { model: route.model, upstream: route.upstream, protocol: route.protocol, upstreamToken, upstreamModel: route.upstreamModel };
  });
}
