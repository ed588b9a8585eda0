import type { EventEmitter } from 'eventemitter3';
import type { HandlersOf } from '../events.js';

/** Emits an event under its own `type`. TypeScript cannot pair a union member with its keyed handler: one cast. */
export function emitByType<E extends { type: string }>(emitter: EventEmitter<HandlersOf<E>>, event: E): void {
  (emitter as unknown as EventEmitter<string>).emit(event.type, event);
}
