/**
 * In-process translation (`translate: true`): a protocol client whose provider speaks another protocol sends its
 * requests through the gateway's codecs in this process (`@ai4ts/gateway/in-process`), so that a Chat Completions
 * request reaches Claude or Gemini natively and comes back a Chat Completions result. Its own Transport still does
 * everything a Transport does (retries, timeouts, middleware, telemetry, logs, cost) over a fetch that never leaves
 * the process; the provider's URL, key and headers are the translator's.
 */
import { Ai4tsError, type ProtocolName, type ProviderPreset, Transport, type TransportOptions } from '@ai4ts/core';

/**
 * The translator's entry by a name in a variable: bundlers leave a dynamic import of a non-literal alone, so an app
 * that never translates neither bundles the gateway nor needs it installed.
 */
const IN_PROCESS = '@ai4ts/gateway/in-process';

/** Where a translated client sends its requests: no host, since the translator's fetch answers them. */
const IN_PROCESS_ORIGIN = 'http://in-process.ai4ts.invalid';

type Fetch = (input: string, init: RequestInit) => Promise<Response>;

/** What the front door uses of `@ai4ts/gateway/in-process`. */
interface InProcessEntry {
  createTranslator(options: {
    provider: ProviderPreset;
    apiKey?: string | undefined;
    accessToken?: TransportOptions['accessToken'];
    fetch?: Fetch | undefined;
  }): Fetch;
}

/**
 * The Transport of each protocol: `main` for the protocols the provider serves, and for the others one that
 * translates, created when first asked for.
 */
export function translatedTransports(options: TransportOptions, main: Transport): (protocol: ProtocolName) => Transport {
  const { provider: _provider, baseURL, apiKey, accessToken, headers, query, fetch, ...watching } = options;
  const preset = main.provider;
  const serves = preset.serves ?? [preset.protocol ?? 'chat'];
  let translator: Promise<Fetch> | undefined;
  const translate: Fetch = async (input, init) => {
    translator ??= load({
      provider: {
        ...preset,
        baseURL: baseURL ?? preset.baseURL,
        headers: { ...preset.headers, ...headers },
        query: { ...preset.query, ...query },
      },
      apiKey,
      accessToken,
      fetch,
    });
    return (await translator)(input, init);
  };
  return (protocol) =>
    serves.includes(protocol) ? main : new Transport({ ...watching, provider: inProcessPreset(preset, protocol), fetch: translate });
}

/** Loads the translator once; a missing package or an unreachable provider is an error of every call that says so. */
async function load(options: Parameters<InProcessEntry['createTranslator']>[0]): Promise<Fetch> {
  let entry: InProcessEntry;
  try {
    entry = await import(/* webpackIgnore: true */ /* @vite-ignore */ IN_PROCESS);
  } catch (cause) {
    throw new Ai4tsError('translate: true needs the @ai4ts/gateway package: npm install @ai4ts/gateway', { cause });
  }
  try {
    return entry.createTranslator(options);
  } catch (cause) {
    // A preset without a URL or a key: the message names variables, never a value.
    throw new Ai4tsError(`translate: true cannot reach ${options.provider.name}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * The preset a translated client is sent through: the provider's name (spans and logs say whom the call reached),
 * the protocol's path on the in-process origin, no auth of its own, and the quirks of a gateway's answers.
 */
function inProcessPreset(provider: ProviderPreset, protocol: ProtocolName): ProviderPreset {
  return {
    name: provider.name,
    // Gemini's paths are under its API version, as the gateway serves them.
    baseURL: `${IN_PROCESS_ORIGIN}/${protocol === 'gemini' ? 'v1beta' : 'v1'}`,
    apiKeyEnv: [],
    auth: 'none',
    protocol,
    quirks: { streamOptions: true },
  };
}
