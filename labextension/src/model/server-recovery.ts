/**
 * Asking the server to finish a notebook's unfinished hermes outputs.
 *
 * Under real-time collaboration a browser never writes a hermes output: two
 * browsers replacing the same output in the shared document leave two. It asks
 * the server instead, which writes through the room's shared document once per
 * run (idempotent by run id, one recovery per notebook at a time), so however
 * many collaborators ask, every browser and the saved file get one output.
 */
import { HermesClient } from '../api/client';

/** Milliseconds between two requests for the same notebook from this page. */
const REQUEST_GAP_MS = 1000;

export class ServerRecovery {
  constructor(private _client: HermesClient) {}

  /** Ask for `path` (a server-relative notebook path); requests close together are merged. */
  request(path: string): Promise<void> {
    const pending = this._pending.get(path);
    if (pending) {
      return pending;
    }
    const asked = this._ask(path).finally(() =>
      setTimeout(() => this._pending.delete(path), REQUEST_GAP_MS)
    );
    this._pending.set(path, asked);
    return asked;
  }

  private async _ask(path: string): Promise<void> {
    try {
      await this._client.recoverNotebook(path);
    } catch (error) {
      console.warn(`hermes-jupyter: the server could not recover ${path}`, error);
    }
  }

  private _pending = new Map<string, Promise<void>>();
}
