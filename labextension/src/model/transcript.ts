/**
 * The live, incremental fold of one run's journal into transcript rows
 * (docs/transcript.md). For the same journal rows it yields exactly the rows of
 * the server's fold; the golden fixtures (tests/fixtures/journals) pin that.
 * It never words anything: marker and note text come from the payloads, and
 * once the server's settled message arrives its rows are the verdict.
 *
 * Rows already folded (`seq <= lastSeq`) are ignored, so replays and
 * reconnects cannot duplicate text. A changed row is a new object.
 */
import { EVENTS, IJournalRow, IRunInfo, ISettledMessage, RunStatus, isTerminalRow } from '../api/contract';
import { IApprovalRow, IClarifyRow, IPlanRow, IToolRow, TranscriptRow } from '../api/rows';
import * as make from './fold-rows';

/** Events that close the text segment before them. */
const SEGMENT_BREAKS: ReadonlySet<string> = new Set([
  EVENTS.tool,
  EVENTS.approval,
  EVENTS.clarify,
  EVENTS.plan
]);

/** How the end of a run answers a card nobody answered (the schema's wording). */
const UNANSWERED_REASON = 'not answered before the run ended';

export class LiveTranscript {
  constructor(readonly runId: string) {}

  /** The rows so far; the same array until the next change. */
  get rows(): readonly TranscriptRow[] {
    if (!this._snapshot) {
      this._snapshot = this._rows.slice();
    }
    return this._snapshot;
  }

  get lastSeq(): number {
    return this._lastSeq;
  }

  /** A terminal row was folded. */
  get ended(): boolean {
    return this._ended;
  }

  /** The server's verdict, once received. */
  get settled(): ISettledMessage | null {
    return this._settled;
  }

  get status(): RunStatus {
    return this._settled?.status ?? this._verdict?.status ?? 'running';
  }

  /** Id of the text row still receiving tokens, or null. */
  get streamingId(): string | null {
    if (this._ended || this._settled || this._verdict) {
      return null;
    }
    const last = this._rows[this._rows.length - 1];
    return last && this._segmentIds().includes(last.id) ? last.id : null;
  }

  /** Fold one journal row; true if it changed the rows. */
  apply(row: IJournalRow): boolean {
    if (!row || !Number.isInteger(row.seq) || row.seq <= this._lastSeq || this._settled) {
      return false;
    }
    this._lastSeq = row.seq;
    const before = this._version;
    const p = row.payload ?? {};
    if (SEGMENT_BREAKS.has(row.event)) {
      this._closeSegment();
    }
    switch (row.event) {
      case EVENTS.token:
        this._text += make.str(p.text);
        this._putSegment();
        break;
      case EVENTS.reasoning:
        this._reasoning += make.str(p.text ?? p.reasoning ?? p.thinking);
        this._putSegment();
        break;
      case EVENTS.interimAssistant:
        this._interim(p);
        break;
      case EVENTS.tool:
        this._push(make.toolRow(this.runId, { ...row, payload: p }));
        break;
      case EVENTS.toolComplete:
        this._completeTool(row);
        break;
      case EVENTS.approval:
        this._card(make.approvalRow(this.runId, p), p, make.resolvedApproval);
        break;
      case EVENTS.clarify:
        this._card(make.clarifyRow(this.runId, p), p, make.resolvedClarify);
        break;
      case EVENTS.plan:
        this._plan(make.planItems(p));
        break;
      case EVENTS.usage:
        this._upsert(make.usageRow(this.runId, p));
        break;
      case EVENTS.compaction:
      case EVENTS.status:
        this._push(make.noteRow(this.runId, row, row.event));
        break;
      default:
        if (isTerminalRow(row)) {
          this._terminal(row);
        }
    }
    return this._version !== before;
  }

  /** Adopt the server's verdict: its rows replace ours (unchanged rows keep their identity). */
  settle(message: ISettledMessage): void {
    const mine = new Map(this._rows.map(r => [r.id, r]));
    this._rows = message.transcript.rows.map(row => {
      const old = mine.get(row.id);
      return old && JSON.stringify(old) === JSON.stringify(row) ? old : row;
    });
    this._settled = message;
    this._lastSeq = Math.max(this._lastSeq, message.transcript.last_seq);
    this._changed();
  }

  /** A verdict without a settled message (`GET runs/{id}`): its status, and its marker if any. */
  verdict(info: IRunInfo): void {
    this._verdict = info;
    if (info.marker) {
      this._upsert(make.terminalMarker(this.runId, { marker: info.marker }));
    }
    this._changed();
  }

  private _segmentIds(): string[] {
    return [`${this.runId}:a:${this._n}`, `${this.runId}:r:${this._n}`];
  }

  /** Show the open segment: reasoning before its text, blank parts not at all. */
  private _putSegment(): void {
    const [textId, reasoningId] = this._segmentIds();
    const reasoning = this._reasoning.trim();
    if (reasoning) {
      const row = { kind: 'reasoning' as const, id: reasoningId, text: reasoning };
      if (!this._replace(row)) {
        const at = this._indexOf(textId);
        at < 0 ? this._push(row) : this._insert(at, row);
      }
    }
    const text = this._text.trim();
    if (text) {
      const row = { kind: 'assistant' as const, id: textId, text };
      this._replace(row) || this._push(row);
    }
  }

  /** The next text goes to a new segment (a segment that showed nothing keeps its ordinal). */
  private _closeSegment(): void {
    if (this._segmentIds().some(id => this._indexOf(id) >= 0)) {
      this._n += 1;
    }
    this._text = '';
    this._reasoning = '';
  }

  private _interim(p: { [key: string]: unknown }): void {
    const text = make.str(p.text);
    if (!p.already_streamed && text.trim()) {
      const sep = this._text && !/\s$/.test(this._text) ? '\n\n' : '';
      this._text += sep + text;
      this._putSegment();
    }
    this._closeSegment();
  }

  /** Pair a completion by tid, else with the newest running card of that name without a provider tid. */
  private _completeTool(row: IJournalRow): void {
    const p = row.payload ?? {};
    const byTid = this._find<IToolRow>(r => r.kind === 'tool' && r.tid === make.str(p.tid));
    const card =
      byTid ??
      this._find<IToolRow>(
        r => r.kind === 'tool' && r.status === 'running' && r.tid.startsWith('journal-') &&
          (!p.name || r.name === p.name)
      );
    if (card) {
      this._replace(make.completedTool(card, p));
    }
  }

  /** A pending card is added; a resolution updates the card with the same id of the same kind. */
  private _card<T extends IApprovalRow | IClarifyRow>(
    fresh: T,
    p: { [key: string]: unknown },
    resolve: (card: T, p: { [key: string]: unknown }) => T
  ): void {
    const existing = this._rows[this._indexOf(fresh.id)] as T | undefined;
    if (p.status === 'resolved') {
      this._replace(resolve(existing ?? fresh, p)) || this._push(resolve(fresh, p));
    } else if (!existing) {
      this._push(fresh);
    }
  }

  private _plan(items: IPlanRow['items']): void {
    this._upsert({ kind: 'plan', id: `${this.runId}:plan`, items });
  }

  private _terminal(row: IJournalRow): void {
    this._closeSegment();
    this._ended = true;
    for (const card of this._rows) {
      if (card.kind === 'approval' && card.status === 'pending') {
        this._replace({ ...card, status: 'resolved', choice: 'deny', reason: UNANSWERED_REASON });
      } else if (card.kind === 'clarify' && card.status === 'pending') {
        this._replace({ ...card, status: 'resolved', answer: null });
      }
    }
    const p = row.payload ?? {};
    if (make.isToolLimit(row)) {
      this._push({ ...make.noteRow(this.runId, row, 'status'), level: 'warning', text: make.str(p.message) });
    } else if (row.event !== EVENTS.done && row.event !== EVENTS.streamEnd) {
      this._upsert(make.terminalMarker(this.runId, p));
    }
  }

  private _find<T extends TranscriptRow>(test: (row: TranscriptRow) => boolean): T | null {
    for (let i = this._rows.length - 1; i >= 0; i--) {
      if (test(this._rows[i])) {
        return this._rows[i] as T;
      }
    }
    return null;
  }

  private _indexOf(id: string): number {
    for (let i = this._rows.length - 1; i >= 0; i--) {
      if (this._rows[i].id === id) {
        return i;
      }
    }
    return -1;
  }

  /** Replace the row with the same id; false if there is none. */
  private _replace(row: TranscriptRow): boolean {
    const at = this._indexOf(row.id);
    if (at < 0) {
      return false;
    }
    this._rows[at] = row;
    this._changed();
    return true;
  }

  private _upsert(row: TranscriptRow): void {
    this._replace(row) || this._push(row);
  }

  private _push(row: TranscriptRow): void {
    this._rows.push(row);
    this._changed();
  }

  private _insert(at: number, row: TranscriptRow): void {
    this._rows.splice(at, 0, row);
    this._changed();
  }

  private _changed(): void {
    this._snapshot = null;
    this._version += 1;
  }

  private _rows: TranscriptRow[] = [];
  private _snapshot: TranscriptRow[] | null = null;
  private _version = 0;
  private _lastSeq = 0;
  private _ended = false;
  private _settled: ISettledMessage | null = null;
  private _verdict: IRunInfo | null = null;
  /** The open text segment: its ordinal and the raw text and reasoning so far. */
  private _n = 0;
  private _text = '';
  private _reasoning = '';
}
