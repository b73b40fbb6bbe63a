/**
 * The composer's attachments: what the next turn carries (chips), and where
 * attachments come from. Sources are provided by the notebook-context plugin
 * (active cell, selection, file, variable); without it the composer offers none.
 */
import { ISignal, Signal } from '@lumino/signaling';

import type { AttachmentKind, IAttachment } from '../api/contract';
import type { IMention, IMentionSource } from './mentions';

/** Characters of one attachment's text the client sends (the server cuts at the same cap). */
export const MAX_ATTACHMENT_CHARS = 20_000;
/** Attachments one turn may carry (the server refuses more). */
export const MAX_ATTACHMENTS = 8;

/** Where attachments come from; each resolves null when there is nothing to attach (said in `problem`). */
export interface IAttachmentSources {
  /** Kinds this source can attach right now (a selection needs a notebook, a variable a kernel). */
  available(): AttachmentKind[];
  pick(kind: AttachmentKind): Promise<IAttachment | null>;
  /** What `@` in the composer can name, built by the same code as `pick` (model/mentions.ts). */
  mentions?: IMentionSource;
}

export class AttachmentsModel {
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get items(): readonly IAttachment[] {
    return this._items;
  }

  get sources(): IAttachmentSources | null {
    return this._sources;
  }

  /** Why the last pick attached nothing, in plain words (null: it worked). */
  get problem(): string | null {
    return this._problem;
  }

  setSources(sources: IAttachmentSources | null): void {
    this._sources = sources;
    this._changed.emit();
  }

  /** Attach one item: its text cut to the cap, the same item (kind, label, text) only once. */
  add(item: IAttachment): boolean {
    if (this._items.length >= MAX_ATTACHMENTS) {
      this._setProblem(`A message can carry at most ${MAX_ATTACHMENTS} attachments. Remove one first.`);
      return false;
    }
    const cut = cutAttachment(item);
    if (!this._items.some(a => a.kind === cut.kind && a.label === cut.label && a.text === cut.text)) {
      this._items = [...this._items, cut];
    }
    this._setProblem(null);
    return true;
  }

  async pick(kind: AttachmentKind): Promise<void> {
    const sources = this._sources;
    await this._attach(() => (sources ? sources.pick(kind) : Promise.resolve(null)), NOTHING[kind]);
  }

  /** Attach what an `@` pick names; resolves whether it was attached (else `problem` says why). */
  attachMention(mention: IMention): Promise<boolean> {
    const source = this._sources?.mentions;
    return this._attach(
      () => (source ? source.attach(mention) : Promise.resolve(null)),
      `${mention.label} could not be attached.`
    );
  }

  private async _attach(build: () => Promise<IAttachment | null>, nothing: string): Promise<boolean> {
    let item: IAttachment | null;
    try {
      item = await build();
    } catch (error) {
      // the server's plain sentence ("no variable named …", "the kernel is busy …")
      this._setProblem(error instanceof Error ? error.message : String(error));
      return false;
    }
    if (item) {
      return this.add(item);
    }
    this._setProblem(nothing);
    return false;
  }

  remove(index: number): void {
    this._items = this._items.filter((_, i) => i !== index);
    this._changed.emit();
  }

  clear(): void {
    if (this._items.length || this._problem) {
      this._items = [];
      this._problem = null;
      this._changed.emit();
    }
  }

  private _setProblem(problem: string | null): void {
    this._problem = problem;
    this._changed.emit();
  }

  private _items: IAttachment[] = [];
  private _sources: IAttachmentSources | null = null;
  private _problem: string | null = null;
  private _changed = new Signal<this, void>(this);
}

const NOTHING: { [kind in AttachmentKind]: string } = {
  cell: 'Open a notebook and select a cell to attach it.',
  selection: 'Select some text in a notebook cell to attach it.',
  file: 'No file was attached.',
  variable: 'No variable was attached.'
};

export function cutAttachment(item: IAttachment): IAttachment {
  const cut = (text: string) =>
    text.length <= MAX_ATTACHMENT_CHARS
      ? text
      : `${text.slice(0, MAX_ATTACHMENT_CHARS)}\n… [${text.length - MAX_ATTACHMENT_CHARS} more characters not attached]`;
  const out: IAttachment = { ...item, text: cut(item.text) };
  if (item.output !== undefined) {
    out.output = cut(item.output);
  }
  return out;
}

/** A chip's words: "cell In [3]", "file data.csv". */
export function attachmentTitle(item: IAttachment): string {
  const legacy = item as unknown as { name?: unknown; path?: unknown };
  const label = item.label ?? legacy.name ?? legacy.path ?? '';
  return `${item.kind ?? 'attachment'} ${String(label)}`.trim();
}
