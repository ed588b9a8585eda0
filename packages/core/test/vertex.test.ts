/**
 * Vertex AI: the preset's URLs and Claude request form, and Google credentials through the real google-auth-library
 * against local token endpoints (a fake GCE metadata server for Application Default Credentials, and an STS endpoint
 * named in a credentials file), never a real credential or the internet.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ai4tsError, googleAccessToken, Transport, VERTEX_ANTHROPIC_VERSION, vertex } from '@ai4ts/core';
import { serve, type TestServer } from '@ai4ts/test-kit';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectNoSecret } from './secret.js';

describe('vertex()', () => {
  it('points at the global endpoint by default, and at a regional one for a region', () => {
    expect(vertex({ project: 'my-project' })).toMatchObject({
      name: 'vertex',
      baseURL: 'https://aiplatform.googleapis.com/v1/projects/my-project/locations/global/publishers/google',
      auth: 'bearer',
      apiKeyEnv: [],
    });
    expect(vertex({ project: 'my-project', location: 'us-east5', publisher: 'anthropic' })).toMatchObject({
      name: 'vertex-anthropic',
      protocol: 'messages',
      baseURL: 'https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/anthropic',
    });
    expect(vertex({ project: 'p' }).accessToken).toBeTypeOf('function');
  });

  it('refuses an empty project and a location that is not a region name', () => {
    expect(() => vertex({ project: '' })).toThrow(Ai4tsError);
    expect(() => vertex({ project: 'p', location: 'evil.example/x' })).toThrow('not a Vertex AI location');
  });

  it("rewrites a Claude Messages request to Vertex's rawPredict form, and refuses any other path", () => {
    const { rewriteRequest } = vertex({ project: 'p', publisher: 'anthropic' });
    if (!rewriteRequest) throw new Error('the anthropic preset rewrites requests');
    const body = { model: 'claude-sonnet-4-5@20250929', max_tokens: 10, messages: [], stream: true };
    expect(rewriteRequest({ path: '/messages', body })).toEqual({
      path: 'models/claude-sonnet-4-5@20250929:streamRawPredict',
      body: { anthropic_version: VERTEX_ANTHROPIC_VERSION, max_tokens: 10, messages: [], stream: true },
    });
    expect(rewriteRequest({ path: '/messages', body: { ...body, stream: false } }).path).toBe(
      'models/claude-sonnet-4-5@20250929:rawPredict',
    );
    expect(rewriteRequest({ path: '/messages', body: { ...body, model: 'a/../b?c' } }).path).toBe('models/a%2F..%2Fb%3Fc:streamRawPredict');
    expect(() => rewriteRequest({ path: '/models', body: undefined })).toThrow(Ai4tsError);
  });
});

/** Application Default Credentials found nowhere but on the (fake) metadata server. */
describe('google credentials through google-auth-library', () => {
  let metadata: TestServer;
  let sts: TestServer;
  let model: TestServer;
  let config: string;
  /** The tokens each endpoint handed out, numbered. */
  const metadataToken = (n: number) => `ya29.metadata-token-${n}`;
  const stsToken = (n: number) => `ya29.sts-token-${n}`;
  let bearers: string[] = [];

  beforeAll(async () => {
    metadata = await serve((req, res, n) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (req.headers['metadata-flavor'] !== 'Google' || path !== '/computeMetadata/v1/instance/service-accounts/default/token') {
        res.writeHead(404, { 'metadata-flavor': 'Google' }).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'metadata-flavor': 'Google' });
      res.end(JSON.stringify({ access_token: metadataToken(n), expires_in: 3599, token_type: 'Bearer' }));
    });
    sts = await serve((_req, res, n) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          access_token: stsToken(n),
          issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          token_type: 'Bearer',
          expires_in: 3600,
        }),
      );
    });
    model = await serve((req, res) => {
      const bearer = req.headers.authorization ?? '';
      bearers.push(bearer);
      const refused = bearer === `Bearer ${metadataToken(1)}`;
      res.writeHead(refused ? 401 : 200, { 'content-type': 'application/json' });
      res.end(refused ? JSON.stringify({ error: { message: `token ${bearer} expired` } }) : '{"ok":true}');
    });
    config = await mkdtemp(join(tmpdir(), 'ai4ts-gcloud-'));
  });

  afterEach(() => {
    vi.unstubAllEnvs();
    bearers = [];
  });

  afterAll(async () => {
    await Promise.all([metadata.close(), sts.close(), model.close(), rm(config, { recursive: true, force: true })]);
  });

  /** Nothing in the environment but the metadata server's address. */
  function onlyMetadataServer() {
    vi.stubEnv('GOOGLE_APPLICATION_CREDENTIALS', undefined);
    vi.stubEnv('CLOUDSDK_CONFIG', config); // an empty gcloud config: no user credentials
    vi.stubEnv('GCE_METADATA_HOST', new URL(metadata.url).host);
    vi.stubEnv('METADATA_SERVER_DETECTION', 'assume-present');
  }

  it("ADC: the metadata server's token, fetched once, and fetched again (not from the library's cache) after a 401", async () => {
    onlyMetadataServer();
    const transport = new Transport({
      provider: vertex({ project: 'p', location: 'us-east5', publisher: 'anthropic' }),
      baseURL: model.baseURL,
      maxRetries: 0,
    });
    // The first token is refused: the library is asked for a new one, which it must fetch, not serve from its cache.
    expect(await transport.json('/messages', { body: { model: 'claude', max_tokens: 1, messages: [] } })).toEqual({ ok: true });
    expect(await transport.json('/messages', { body: { model: 'claude', max_tokens: 1, messages: [] } })).toEqual({ ok: true });
    expect(bearers).toEqual([`Bearer ${metadataToken(1)}`, `Bearer ${metadataToken(2)}`, `Bearer ${metadataToken(2)}`]);
    expect(metadata.requests).toBe(2);
  });

  it('a key file (workload identity federation) whose token endpoint is local', async () => {
    vi.stubEnv('GOOGLE_APPLICATION_CREDENTIALS', undefined);
    vi.stubEnv('CLOUDSDK_CONFIG', config);
    const subject = join(config, 'subject-token');
    const keyFile = join(config, 'credentials.json');
    await writeFile(subject, 'a-subject-token-from-the-identity-provider');
    await writeFile(
      keyFile,
      JSON.stringify({
        type: 'external_account',
        audience: '//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/pool/providers/provider',
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        token_url: `${sts.url}token`,
        credential_source: { file: subject },
      }),
    );
    const source = googleAccessToken({ keyFile });
    const first = await source({ refresh: false });
    expect(first).toMatchObject({ token: stsToken(1) });
    expect(typeof first === 'object' && first.expiresAt).toBeGreaterThan(Date.now() + 3000_000);
    expect(await source({ refresh: false })).toMatchObject({ token: stsToken(1) });
    expect(await source({ refresh: true })).toMatchObject({ token: stsToken(2) });
    expect(sts.requests).toBe(2);
  });

  it('the credentials object itself (as parsed from a secret store), through vertex()', async () => {
    vi.stubEnv('GOOGLE_APPLICATION_CREDENTIALS', undefined);
    vi.stubEnv('CLOUDSDK_CONFIG', config);
    const subject = join(config, 'subject-token-2');
    await writeFile(subject, 'another-subject-token');
    const credentials = {
      type: 'external_account',
      audience: '//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/pool/providers/provider',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      token_url: `${sts.url}token`,
      credential_source: { file: subject },
    };
    const before = sts.requests;
    const transport = new Transport({ provider: vertex({ project: 'p', credentials: { credentials } }), baseURL: model.baseURL });
    expect(await transport.json('/x', { body: {} })).toEqual({ ok: true });
    expect(bearers).toEqual([`Bearer ${stsToken(before + 1)}`]);
  });

  it('no credentials anywhere: an AuthenticationError from the first request, naming the cause', async () => {
    vi.stubEnv('GOOGLE_APPLICATION_CREDENTIALS', join(config, 'missing.json'));
    const transport = new Transport({ provider: vertex({ project: 'p' }), baseURL: model.baseURL });
    const before = model.requests;
    const error = await transport.json('/x', { body: {} }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'AuthenticationError' });
    expect((error as Error).message).toMatch(/^Could not get an access token: .*missing\.json/);
    expect(model.requests).toBe(before);
    expectNoSecret(error, metadataToken(2));
  });
});
