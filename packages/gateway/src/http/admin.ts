/**
 * The admin API of virtual keys, under its own bearer token (`adminToken`): `GET /admin/keys` lists them (never a
 * key or a hash: ids, names, the short prefix), `POST` creates one and answers its key once, `GET`, `PATCH` and
 * `DELETE /admin/keys/{id}` read, update and revoke one, `GET /admin/keys/{id}/spend` tells its spend so far.
 * Errors are OpenAI's shape; without an admin token (or without keys) the admin API does not exist: a 404.
 */
import { z } from 'zod';
import type { GatewayContext } from '../context.js';
import type { KeyGate } from '../keys/gate.js';
import { durationMs, issueKey, KeySettingsSchema, KeyUpdateSchema, publicView, updated } from '../keys/key.js';
import { spendOf } from '../keys/limits.js';
import { HttpError, invalid } from './errors.js';
import type { Incoming, Reply } from './incoming.js';

/** Where the admin API lives. */
export const ADMIN_ROOT = '/admin/keys';

const ONE = /^\/admin\/keys\/(key_[0-9a-f]{16})(\/spend)?$/;

function notFound(what: string): HttpError {
  return new HttpError(404, invalid(`No ${what}`, null, 'not_found'));
}

/** Answers one admin request; see the file comment. */
export async function admin(context: GatewayContext, request: Incoming, path: string): Promise<Reply> {
  const keys = context.keys;
  if (!context.admin || !keys) throw notFound(`route ${request.method} ${path}`);
  context.admin.check(request.header('authorization'));
  if (path === ADMIN_ROOT) {
    if (request.method === 'GET') {
      const list = await keys.store.list();
      return { status: 200, headers: {}, body: { object: 'list', data: list.map(publicView) } };
    }
    if (request.method === 'POST') return create(keys, await bodyOf(request, KeyCreateSchema));
    throw methodNotAllowed('GET, POST', path);
  }
  const match = ONE.exec(path);
  const id = match?.[1];
  if (id === undefined) throw notFound(`route ${request.method} ${path}`);
  const key = await keys.store.get(id);
  if (!key) throw notFound(`key ${id}`);
  if (match?.[2]) {
    if (request.method !== 'GET') throw methodNotAllowed('GET', path);
    return { status: 200, headers: {}, body: await spendOf(keys.counters, key) };
  }
  switch (request.method) {
    case 'GET':
      return { status: 200, headers: {}, body: { ...publicView(key), spend: await spendOf(keys.counters, key) } };
    case 'PATCH': {
      const next = updated(key, await bodyOf(request, KeyUpdateSchema));
      await keys.store.put(next);
      return { status: 200, headers: {}, body: publicView(next) };
    }
    case 'DELETE': {
      const revoked = { ...key, revokedAt: key.revokedAt ?? new Date().toISOString() };
      await keys.store.put(revoked);
      return { status: 200, headers: {}, body: publicView(revoked) };
    }
    default:
      throw methodNotAllowed('GET, PATCH, DELETE', path);
  }
}

/** A new key's settings, with its lifetime as a duration (`30d`) or an ISO time. */
const KeyCreateSchema = KeySettingsSchema.extend({ expiresIn: z.string().optional() });

async function create(keys: KeyGate, body: z.infer<typeof KeyCreateSchema>): Promise<Reply> {
  const { expiresIn, ...settings } = body;
  if (expiresIn !== undefined) {
    const ms = durationMs(expiresIn);
    if (ms === undefined) throw new HttpError(400, invalid('expiresIn must be like 30d, 12h or 90m', 'expiresIn', 'invalid_value'));
    settings.expiresAt = new Date(Date.now() + ms).toISOString();
  }
  const { key, record } = await issueKey(settings);
  await keys.store.put(record);
  return { status: 201, headers: { 'cache-control': 'no-store' }, body: { ...publicView(record), key } };
}

async function bodyOf<T>(request: Incoming, schema: z.ZodType<T>): Promise<T> {
  let json: unknown;
  try {
    json = JSON.parse(await request.text());
  } catch {
    throw new HttpError(400, invalid('The request body is not valid JSON', null, 'invalid_json'));
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const param = issue?.path.map(String).join('.') || null;
  throw new HttpError(400, invalid(`${param ?? 'The body'}: ${issue?.message ?? 'invalid'}`, param, 'invalid_value'));
}

function methodNotAllowed(allow: string, path: string): HttpError {
  return new HttpError(405, invalid(`Use ${allow} for ${path}`, null, 'method_not_allowed'), { allow });
}
