/** Closing node:http connections: when the client asks for it, and after a request body left unread. */
import type { Socket } from 'node:net';

/** How long a connection closed with its request body unread keeps discarding that body before it is dropped. */
const LINGER_MS = 2_000;

/** Whether a `Connection` header asks to close the connection after this exchange. */
export function asksClose(connection: string | null | undefined): boolean {
  return connection != null && /(^|,)\s*close\s*($|,)/i.test(connection);
}

/**
 * Makes node:http close `socket` after the answer without losing the answer: a lingering close, as nginx and Apache
 * do. Closing a socket with unread input makes the kernel answer with a reset, and a client still sending its body
 * then fails on a write before it has read the answer (a 413 or 401 sent early is lost). So the answer is followed by
 * a FIN, what the client still sends is discarded, and the socket is dropped when the client closes its side or after
 * {@link LINGER_MS}. node:http ends a `Connection: close` exchange with `socket.destroySoon()`: this socket's is
 * replaced.
 */
export function lingerOnClose(socket: Socket): void {
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('end', () => socket.destroy());
    socket.once('close', () => clearTimeout(timer));
    socket.resume();
  };
}
