/**
 * Requests made while typing (inline completion, docs/editor.md): each waits a short pause
 * first, and only the newest one counts. A newer request aborts the one before it, whether
 * it is still waiting (it never goes out) or already asked (its fetch sees its signal abort
 * and the server stops asking the model).
 */

/** Wait `ms`, or less when `signal` aborts; never rejects. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

export const sleep: Sleep = (ms, signal) =>
  new Promise(resolve => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });

export class LatestRequest {
  constructor(
    public delayMs: number,
    private _sleep: Sleep = sleep
  ) {}

  /**
   * `fetch`'s answer after the pause, or null when a newer request (or `cancel`) came first. A
   * failure of a request that still counts is thrown; one of a superseded request is not.
   */
  async run<T>(fetch: (signal: AbortSignal) => Promise<T>): Promise<T | null> {
    this._current?.abort();
    const controller = new AbortController();
    this._current = controller;
    try {
      await this._sleep(this.delayMs, controller.signal);
      if (controller.signal.aborted) {
        return null;
      }
      const answer = await fetch(controller.signal);
      return controller.signal.aborted ? null : answer;
    } catch (error) {
      if (controller.signal.aborted) {
        return null;
      }
      throw error;
    } finally {
      if (this._current === controller) {
        this._current = null;
      }
    }
  }

  /** Abort the request waiting or asking, if any. */
  cancel(): void {
    this._current?.abort();
    this._current = null;
  }

  private _current: AbortController | null = null;
}

/** The code before and after the cursor; null when there is nothing to complete (no code before it on its line). */
export function aroundCursor(text: string, offset: number): { prefix: string; suffix: string } | null {
  const prefix = text.slice(0, offset);
  const line = prefix.slice(prefix.lastIndexOf('\n') + 1);
  if (!line.trim()) {
    return null;
  }
  return { prefix, suffix: text.slice(offset) };
}
