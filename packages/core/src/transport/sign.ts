/**
 * Requests signed as a whole instead of carrying a key: AWS Signature Version 4 (Amazon Bedrock). The signature
 * covers the method, URL, headers and the exact body text, so the Transport signs each attempt right before it is
 * sent, and sends the body it signed.
 */

/** A request about to be sent, as the signer sees it. */
export interface SignableRequest {
  method: string;
  url: URL;
  /** The headers to send; the signer returns them with its own added. */
  headers: Headers;
  /** The JSON body text exactly as sent, or undefined. */
  body: string | undefined;
}

/** Signs requests for a preset (see {@link ProviderPreset.signer}). */
export interface RequestSigner {
  /** The headers to send `request` with: its own plus the signature's. Throws AuthenticationError without credentials. */
  sign(request: SignableRequest): Promise<Headers>;
  /** The secrets it signs with now, for redaction (empty before the first request). Not for display. */
  secrets(): readonly string[];
}
