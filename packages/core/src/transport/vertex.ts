/**
 * Google Cloud's Vertex AI: where a project's models live, and Google credentials as an {@link AccessTokenSource}.
 *
 * - Gemini (publisher `google`): `{baseURL}/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`,
 *   the paths of Gemini's own API under a Vertex baseURL.
 * - Claude (publisher `anthropic`): Anthropic Messages at `{baseURL}/models/{model}:rawPredict` and
 *   `:streamRawPredict`, the body without `model` and with `anthropic_version`, no `anthropic-version` header; the
 *   answers are Anthropic's own (JSON, or the usual SSE events), read by the Messages listener as they are.
 *
 * `google-auth-library` is an optional peer, loaded on the first request that needs a token: a browser or edge
 * bundle never carries it (pass your own `accessToken` function there).
 */
import { Ai4tsError, AuthenticationError, isRecord } from '../errors.js';
import type { ProviderPreset, WireRequest } from './providers.js';
import type { AccessTokenSource } from './token.js';

/** Which of Vertex's model publishers a preset reaches, and so which protocol it speaks. */
export type VertexPublisher = 'google' | 'anthropic';

/** Where a Vertex preset points, and with which credentials. */
export interface VertexOptions {
  /** The Google Cloud project id. */
  project: string;
  /** `global` (the default: one endpoint, routed by Google) or a region such as `us-central1` or `europe-west4`. */
  location?: string;
  /** `google` (Gemini, the default) or `anthropic` (Claude, through Anthropic Messages). */
  publisher?: VertexPublisher;
  /** Google credentials (default: Application Default Credentials); the Transport's `accessToken` wins over them. */
  credentials?: GoogleCredentials;
}

/**
 * Google credentials for {@link googleAccessToken}. Nothing: Application Default Credentials (the
 * `GOOGLE_APPLICATION_CREDENTIALS` file, `gcloud auth application-default login`, or the metadata server on Google
 * Cloud). `keyFile`: a credentials file's path (a service-account key, workload identity federation). `credentials`:
 * the key itself (the file's JSON, parsed).
 */
export interface GoogleCredentials {
  keyFile?: string;
  credentials?: Record<string, unknown>;
  /** The project (`vertex()` gives its own); else google-auth-library looks for one, running `gcloud` if it must. */
  projectId?: string;
}

/** The anthropic_version Vertex AI wants in the body of a Claude request. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/**
 * The preset of a Vertex AI project: its baseURL (the global endpoint
 * `https://aiplatform.googleapis.com/v1/projects/{project}/locations/global/publishers/{publisher}`, or the regional
 * `https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}/publishers/{publisher}`),
 * bearer auth from Google credentials ({@link googleAccessToken}), and for `anthropic` the Messages requests
 * rewritten to Vertex's `rawPredict` form.
 *
 * @example
 * ```ts
 * const client = new Ai4ts({ provider: vertex({ project: 'my-project', location: 'us-east5', publisher: 'anthropic' }) });
 * const message = await client.messages.create({ model: 'claude-sonnet-4-5@20250929', max_tokens: 512, messages });
 * ```
 *
 * @throws Ai4tsError for an empty project or a location that is not a region name.
 */
export function vertex(options: VertexOptions): ProviderPreset {
  const { project, location = 'global', publisher = 'google' } = options;
  if (!project) throw new Ai4tsError('vertex() needs a project id');
  if (!/^[a-z][a-z0-9-]*$/.test(location)) throw new Ai4tsError(`"${location}" is not a Vertex AI location`);
  const host = location === 'global' ? 'aiplatform.googleapis.com' : `${location}-aiplatform.googleapis.com`;
  const base = {
    baseURL: `https://${host}/v1/projects/${encodeURIComponent(project)}/locations/${location}/publishers/${publisher}`,
    apiKeyEnv: [],
    auth: 'bearer',
    accessToken: googleAccessToken({ projectId: project, ...options.credentials }),
  } satisfies Partial<ProviderPreset>;
  switch (publisher) {
    case 'anthropic':
      return {
        ...base,
        name: 'vertex-anthropic',
        protocol: 'messages',
        rewriteRequest: toRawPredict,
        // Structured output as a forced tool, which every Messages server understands.
        quirks: { streamOptions: false },
      };
    case 'google':
      // Gemini's own protocol: its paths are relative to this baseURL as they are to Gemini's API.
      return { ...base, name: 'vertex', protocol: 'gemini', quirks: { streamOptions: false } };
  }
}

/** A Messages request as Vertex AI takes it: the model in the path, `anthropic_version` in the body. */
function toRawPredict({ path, body }: WireRequest): WireRequest {
  if (path.replace(/^\/+/, '') !== 'messages' || !isRecord(body) || typeof body.model !== 'string') {
    throw new Ai4tsError(`Vertex AI takes only Messages requests (POST /messages with a model) from Claude, not ${path}`);
  }
  const { model, ...rest } = body;
  const method = rest.stream === true ? 'streamRawPredict' : 'rawPredict';
  // Vertex model ids carry their version after an @ (`claude-sonnet-4-5@20250929`), kept as is in the path.
  return {
    path: `models/${encodeURIComponent(model).replaceAll('%40', '@')}:${method}`,
    body: { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest },
  };
}

const GOOGLE_AUTH = 'google-auth-library';
const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** What ai4ts uses of google-auth-library's auth client (an OAuth2Client). */
interface GoogleAuthClient {
  credentials: { expiry_date?: number | null };
  setCredentials(credentials: GoogleAuthClient['credentials']): void;
  getAccessToken(): Promise<{ token?: string | null }>;
}

interface GoogleAuthLibrary {
  GoogleAuth: new (options: GoogleCredentials & { scopes: string[] }) => { getClient(): Promise<GoogleAuthClient> };
}

/**
 * Google credentials as an {@link AccessTokenSource} (scope `cloud-platform`), through `google-auth-library`
 * (install it: `npm install google-auth-library`), loaded on the first call. The library keeps the token and renews
 * it itself; after a 401 it is asked for a new one.
 */
export function googleAccessToken(credentials: GoogleCredentials = {}): AccessTokenSource {
  let client: Promise<GoogleAuthClient> | undefined;
  return async ({ refresh }) => {
    client ??= loadGoogleAuth().then(({ GoogleAuth }) => new GoogleAuth({ ...credentials, scopes: [CLOUD_PLATFORM_SCOPE] }).getClient());
    // A client that could not be made (no credentials found) is tried again on the next request.
    const ready = await client.catch((error: unknown) => {
      client = undefined;
      throw error;
    });
    // Every kind of client (service account, metadata server, user, external account) renews an expired token.
    if (refresh) ready.setCredentials({ ...ready.credentials, expiry_date: 1 });
    const { token } = await ready.getAccessToken();
    if (!token) throw new AuthenticationError('Google credentials gave no access token');
    const expiresAt = ready.credentials.expiry_date;
    return typeof expiresAt === 'number' ? { token, expiresAt } : token;
  };
}

function loadGoogleAuth(): Promise<GoogleAuthLibrary> {
  // The name in a variable: bundlers leave the import alone, so an app without the library still builds.
  return import(/* webpackIgnore: true */ /* @vite-ignore */ GOOGLE_AUTH).then(
    (library: GoogleAuthLibrary) => library,
    (cause: unknown) => {
      throw new Ai4tsError('Google credentials need the google-auth-library package: npm install google-auth-library', {
        cause,
      });
    },
  );
}
