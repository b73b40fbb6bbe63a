/**
 * One RunFollower per run, shared by every view of that run in this page.
 *
 * Under real-time collaboration each display update of the kernel reaches the
 * other browsers as a new output (delete + insert in the shared document), so
 * their renderer is created again about once a second. Taking the run's
 * follower back, with its folded transcript and open stream, keeps the view
 * monotonic: it never goes back to loading, its text never gets shorter, and
 * the journal is read and streamed once per page instead of once per update.
 */
import { HermesClient } from '../api/client';
import { RunFollower } from './run-follower';

/** Milliseconds an unused follower is kept for the next view of its run. */
export const KEEP_UNUSED_MS = 15000;

interface IEntry {
  follower: RunFollower;
  users: number;
  timer: ReturnType<typeof setTimeout> | null;
  /** The last view's markup, painted by the next view until it has rendered itself. */
  view: string | null;
}

export class FollowerPool {
  constructor(
    private _client: HermesClient,
    private _keepMs = KEEP_UNUSED_MS
  ) {}

  /** The run's follower (started), shared; give it back with `release`. */
  acquire(runId: string, live: boolean): RunFollower {
    const entry = this._entries.get(runId);
    if (entry && entry.follower.state !== 'failed' && !entry.follower.isDisposed) {
      if (entry.timer !== null) {
        clearTimeout(entry.timer);
        entry.timer = null;
      }
      entry.users++;
      return entry.follower;
    }
    entry?.follower.dispose();
    const follower = new RunFollower({ client: this._client, runId, live });
    this._entries.set(runId, { follower, users: 1, timer: null, view: null });
    void follower.start();
    return follower;
  }

  /** Keep what a view of the run shows (its own sanitised markup) for the next view of that run. */
  rememberView(runId: string, markup: string): void {
    const entry = this._entries.get(runId);
    if (entry && markup) {
      entry.view = markup;
    }
  }

  /** The last view's markup of a run, or null. */
  lastView(runId: string): string | null {
    return this._entries.get(runId)?.view ?? null;
  }

  /** One view stopped using the follower; it is disposed once unused for a while. */
  release(follower: RunFollower): void {
    const entry = this._entries.get(follower.runId);
    if (!entry || entry.follower !== follower) {
      follower.dispose();
      return;
    }
    entry.users = Math.max(0, entry.users - 1);
    if (entry.users === 0 && entry.timer === null) {
      entry.timer = setTimeout(() => {
        if (entry.users === 0 && this._entries.get(follower.runId) === entry) {
          this._entries.delete(follower.runId);
          follower.dispose();
        }
      }, this._keepMs);
    }
  }

  private _entries = new Map<string, IEntry>();
}
