/**
 * Configuration read again while the gateway runs: the routes file and the virtual keys file. Each file is a
 * {@link Reloader}; the CLI runs them all on SIGHUP,
 * and each one when its file changes (fs.watch, debounced). A reloader validates before it applies: a bad file is
 * refused with the line of its fault, and what is in use stays. Requests already routed keep what they hold.
 */
import { type FSWatcher, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { FileKeyStore } from './keys/store.js';
import type { RouteSpec } from './upstreams/router.js';
import { readRoutes, routesFormatOf } from './upstreams/routes-file.js';

/** One configuration file that can be read again. */
export interface Reloader {
  /** What it reloads, as the log names it: `--routes routes.yaml`. */
  readonly name: string;
  /** The file it reads. */
  readonly path: string;
  /** Reads the file and applies it; rejects, having applied nothing, when the file is unreadable or invalid. */
  reload(): Promise<void>;
}

/** What one reload did: applied, or refused with the reason (the file's fault and its line). */
export type ReloadOutcome = { name: string; applied: true } | { name: string; applied: false; reason: string };

/** Quiet time after a file's last change before it is read: editors write a file in several steps. */
const DEBOUNCE_MS = 200;

/** The reloaders of one gateway: run all on demand (SIGHUP), or each when its file changes. */
export class Reloaders {
  readonly #reloaders: Reloader[] = [];
  readonly #report: (outcome: ReloadOutcome) => void;
  /** What stops each watch: its watcher closed, its pending reload cancelled. */
  readonly #watches: Array<() => void> = [];
  /** One reload at a time: a SIGHUP and a change at once read the file one after the other, never interleaved. */
  #queue: Promise<void> = Promise.resolve();

  constructor(report: (outcome: ReloadOutcome) => void) {
    this.#report = report;
  }

  add(reloader: Reloader): void {
    this.#reloaders.push(reloader);
  }

  /** How many reloaders there are. */
  get size(): number {
    return this.#reloaders.length;
  }

  /** Runs every reloader in turn; a refused file stops none of the others. */
  async reloadAll(): Promise<void> {
    await Promise.all(this.#reloaders.map((reloader) => this.#run(reloader)));
  }

  /**
   * Reloads each file once its changes stop for `debounceMs`. The directory is watched, not the file: an editor that
   * saves by replacing the file would leave a watch on the file looking at the old one.
   */
  watch(debounceMs = DEBOUNCE_MS): void {
    for (const reloader of this.#reloaders) {
      const name = basename(reloader.path);
      let timer: NodeJS.Timeout | undefined;
      // A watch that cannot start or fails (its directory removed, no inotify watch left) leaves SIGHUP working:
      // said, not thrown.
      const unwatched = (error: Error) => this.#report({ name: reloader.name, applied: false, reason: `not watched: ${error.message}` });
      let watcher: FSWatcher;
      try {
        watcher = watch(dirname(reloader.path), { persistent: false }, (_event, changed) => {
          if (changed !== null && changed !== name) return;
          clearTimeout(timer);
          timer = setTimeout(() => void this.#run(reloader), debounceMs);
        });
      } catch (error) {
        unwatched(error instanceof Error ? error : new Error(String(error)));
        continue;
      }
      watcher.on('error', unwatched);
      this.#watches.push(() => {
        watcher.close();
        clearTimeout(timer);
      });
    }
  }

  /** Stops watching. */
  close(): void {
    for (const stop of this.#watches.splice(0)) stop();
  }

  #run(reloader: Reloader): Promise<void> {
    const run = this.#queue.then(() =>
      reloader.reload().then(
        () => this.#report({ name: reloader.name, applied: true }),
        (error: unknown) =>
          this.#report({ name: reloader.name, applied: false, reason: error instanceof Error ? error.message : String(error) }),
      ),
    );
    this.#queue = run;
    return run;
  }
}

/**
 * The routing file as a reloader: read, validated by readRoutes (a fault named with its line and column), then handed
 * to `apply` (the gateway's `setRoutes`, which refuses a route it cannot build). Keys come from `env` as at start.
 */
export function routesReloader(
  path: string,
  env: Readonly<Record<string, string | undefined>>,
  apply: (routes: readonly RouteSpec[]) => void,
): Reloader {
  return {
    name: `--routes ${path}`,
    path,
    async reload() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        // Only the error's code: nothing read from the file is ever printed.
        throw new Error(`cannot read ${path} (${error instanceof Error && 'code' in error ? String(error.code) : 'unreadable'})`);
      }
      apply(readRoutes(text, env, routesFormatOf(path)));
    },
  };
}

/** The virtual keys file as a reloader: reread by the store, which keeps its keys when the file is bad. */
export function keysReloader(store: FileKeyStore): Reloader {
  return { name: `--keys ${store.path}`, path: store.path, reload: () => store.reload() };
}
