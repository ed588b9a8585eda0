/** Reading a resumable gateway stream the way a flaky client does: disconnecting at random and reconnecting. */
import { parseSse } from '@ai4ts/sse';

/** What the client read over all its connections. */
export interface ReadStream {
  streamId: string;
  ids: string[];
  data: string[];
  connections: number;
}

export interface FlakyReadOptions {
  /** The gateways to call, in turn: the first connection goes to the first, each reconnection to the next. */
  bases: readonly string[];
  path: string;
  body: unknown;
  token: string;
  random: () => number;
  /** Reconnect by POSTing the same request again (`same-url`) or with `GET /v1/streams/{id}` (`streams`). */
  via: 'same-url' | 'streams';
  /** Disconnections at most. */
  cuts: number;
}

/**
 * POSTs a resumable request and reads its stream to the end, disconnecting after a random number (1-12) of events
 * `cuts` times, each time reconnecting to the next gateway with the last id as `Last-Event-ID`.
 */
export async function readFlaky(options: FlakyReadOptions): Promise<ReadStream> {
  const { bases, path, token, random } = options;
  const body = JSON.stringify(options.body);
  const read: ReadStream = { streamId: '', ids: [], data: [], connections: 0 };
  let lastId: string | undefined;
  for (let connection = 0; ; connection++) {
    const base = bases[connection % bases.length];
    const controller = new AbortController();
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    let response: Response;
    if (lastId === undefined) {
      response = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { ...headers, 'x-ai4ts-resumable': '1' },
        body,
        signal: controller.signal,
      });
    } else if (options.via === 'streams') {
      response = await fetch(`${base}/v1/streams/${read.streamId}`, {
        headers: { ...headers, 'last-event-id': lastId },
        signal: controller.signal,
      });
    } else {
      response = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { ...headers, 'last-event-id': lastId },
        body,
        signal: controller.signal,
      });
    }
    read.connections++;
    if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    read.streamId ||= response.headers.get('x-ai4ts-stream-id') ?? '';
    const cutAfter = connection < options.cuts ? 1 + Math.floor(random() * 12) : Number.POSITIVE_INFINITY;
    let seen = 0;
    let cut = false;
    for await (const event of parseSse(response)) {
      read.ids.push(event.id ?? '');
      read.data.push(event.data);
      lastId = event.id;
      if (++seen >= cutAfter) {
        cut = true;
        controller.abort();
        break;
      }
    }
    if (!cut) return read;
  }
}

/** The text of a chat.completion.chunk stream's data. */
export function chatText(data: readonly string[]): string {
  let text = '';
  for (const item of data) {
    if (item === '[DONE]') continue;
    const chunk = JSON.parse(item) as { choices?: Array<{ delta?: { content?: string } }> };
    text += chunk.choices?.[0]?.delta?.content ?? '';
  }
  return text;
}
