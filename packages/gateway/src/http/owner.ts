/**
 * Who a request speaks for: what the gateway stores beside what a request created (a resumable stream), so that only
 * the same credential reads it again. A hash of the credential, never the credential: stores and their backups hold
 * no key.
 */
import type { Incoming } from './incoming.js';

/** Domain separation: the same token hashed for another purpose gives another value. */
const PURPOSE = 'ai4ts-gateway-owner:';

/** The credential as the bearer check reads it: `Authorization`, else `x-api-key` as a bearer token. */
export function authorizationOf(request: Incoming): string | undefined {
  const apiKey = request.header('x-api-key');
  return request.header('authorization') ?? (apiKey === undefined ? undefined : `Bearer ${apiKey}`);
}

/**
 * The owner of what `request` creates: the SHA-256 (hex) of the credential it presents ({@link authorizationOf}), or
 * of none. Two requests have the same owner exactly when they present the same credential.
 */
export async function ownerOf(request: Incoming): Promise<string> {
  const header = authorizationOf(request) ?? '';
  // The token alone: `Bearer t` and `bearer  t` are the same credential.
  const credential = /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim() ?? header;
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(PURPOSE + credential));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
