/**
 * The prompts sent from one composer, for ArrowUp / ArrowDown recall.
 *
 * Recall only starts from an empty box and only moves while the box still
 * holds what it recalled, so arrow keys keep moving the caret in a prompt
 * being written.
 */
export class PromptHistory {
  /** Remember a sent prompt (newest last; a repeat of the newest is kept once). */
  add(prompt: string): void {
    if (this._items[this._items.length - 1] !== prompt) {
      this._items.push(prompt);
    }
    this._cursor = null;
  }

  /** The prompt before the one shown, or null when the box holds text of its own (or nothing is older). */
  older(current: string): string | null {
    if (!this._recalling(current)) {
      return null;
    }
    const next = (this._cursor ?? this._items.length) - 1;
    if (next < 0) {
      return null;
    }
    this._cursor = next;
    return this._items[next];
  }

  /** The prompt after the one shown; past the newest, the empty box again. */
  newer(current: string): string | null {
    if (this._cursor === null || !this._recalling(current)) {
      return null;
    }
    const next = this._cursor + 1;
    this._cursor = next < this._items.length ? next : null;
    return this._cursor === null ? '' : this._items[next];
  }

  private _recalling(current: string): boolean {
    if (this._cursor !== null && current === this._items[this._cursor]) {
      return true;
    }
    this._cursor = null;
    return current === '';
  }

  private _items: string[] = [];
  private _cursor: number | null = null;
}
