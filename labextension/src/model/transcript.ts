/**
 * The live, incremental fold of one run's journal into transcript rows
 * (docs/transcript.md). For the same journal rows it yields exactly the rows of
 * the server's fold; the golden fixtures (tests/fixtures/journals) pin that.
 * It words nothing: marker and note text come from the payloads, and once the
 * server's settled message arrives its rows are the verdict.
 *
 * Every new row closes the open text segment first, so the open segment's rows
 * are always last. Rows already folded (`seq <= lastSeq`) are ignored, so
 * replays and reconnects cannot duplicate text. A changed row is a new object.
 */
import { EVENTS, IJournalRow, IRunInfo, ISettledMessage, ISnapshotMessage, RunStatus, isFinalStatus } from '../api/contract';
import { IApprovalRow, IClarifyRow, IProposalRow, IToolRow, TranscriptRow } from '../api/rows';
import * as make from './fold-rows';

/** How the end of a run answers an approval nobody answered (the schema pins these words): deny for the
 * agent, answered by nobody. */
const UNANSWERED_CHOICE = 'deny';
const UNANSWERED_REASON = 'not answered before the run ended';
const NOBODY = { kind: 'timeout' } as const;

/** The cards of one kind among restored rows, by their own id (the keys the fold pairs updates by). */
function cardsOf<K extends TranscriptRow['kind']>(
  rows: readonly TranscriptRow[],
  kind: K,
  key: (row: Extract<TranscriptRow, { kind: K }>) => string
): Map<string, Extract<TranscriptRow, { kind: K }>> {
  const cards = new Map<string, Extract<TranscriptRow, { kind: K }>>();
  for (const row of rows) {
    if (row.kind === kind) {
      const card = row as Extract<TranscriptRow, { kind: K }>;
      cards.set(key(card), card);
    }
  }
  return cards;
}

export class LiveTranscript {
  constructor(readonly runId: string) {}

  /** The rows so far; the same array until the next change. */
  get rows(): readonly TranscriptRow[] {
    if (!this._snapshot) {
      this._snapshot = this._settled ? this._settled.transcript.rows : this._compute();
    }
    return this._snapshot;
  }

  get lastSeq(): number {
    return this._lastSeq;
  }

  /** A terminal row was folded. */
  get ended(): boolean {
    return this._terminal !== null;
  }

  /** The server's verdict, once received. */
  get settled(): ISettledMessage | null {
    return this._settled;
  }

  get status(): RunStatus {
    const verdict = this._verdict?.status;  // never 'queued': only a final status is kept
    return this._settled?.status ?? (verdict && verdict !== 'queued' ? verdict : 'running');
  }

  /** Id of the text row still receiving tokens, or null. */
  get streamingId(): string | null {
    if (this._terminal || this._settled || this._verdict) {
      return null;
    }
    const open = this._segmentRows();
    return open.length ? open[open.length - 1].id : null;
  }

  /** Fold one journal row; true if it changed the rows. */
  apply(row: IJournalRow): boolean {
    if (!row || !Number.isInteger(row.seq) || row.seq <= this._lastSeq || this._settled) {
      return false;
    }
    this._lastSeq = row.seq;
    const before = this._version;
    if (row.terminal === true) {
      // A later done/cancel/apperror supersedes an earlier one; stream_end only counts alone.
      if (!this._terminal || row.event !== EVENTS.streamEnd || this._terminal.event === EVENTS.streamEnd) {
        this._terminal = row;
        this._changed();
      }
    } else if (!this._terminal) {
      this._fold({ ...row, payload: row.payload ?? {} });
    }
    return this._version !== before;
  }

  /**
   * Start from the server's fold up to `snapshot.last_seq` (a stream's first message, docs/api.md):
   * its closed rows, and its open segment as the next tokens extend it. Rows after it fold as usual.
   */
  restore(snapshot: ISnapshotMessage): void {
    if (this._settled || snapshot.last_seq < this._lastSeq) {
      return;
    }
    this._rows = [...snapshot.rows];
    this._index = new Map(this._rows.map((row, at) => [row.id, at]));
    this._tools = cardsOf(this._rows, 'tool', row => row.tid);
    this._approvals = cardsOf(this._rows, 'approval', row => row.approval_id);
    this._clarifies = cardsOf(this._rows, 'clarify', row => row.clarify_id);
    this._proposals = cardsOf(this._rows, 'proposal', row => row.proposal_id);
    this._waits = new Map(Object.entries(snapshot.waits ?? {}));
    this._n = snapshot.open?.n ?? 0;
    this._text = snapshot.open?.text ?? '';
    this._reasoning = snapshot.open?.reasoning ?? '';
    this._terminal = null;
    this._lastSeq = snapshot.last_seq;
    this._changed();
  }

  /** Adopt the server's verdict: its rows replace ours (unchanged rows keep their identity). */
  settle(message: ISettledMessage): void {
    const mine = new Map(this.rows.map(r => [r.id, r]));
    const rows = message.transcript.rows.map(row => {
      const old = mine.get(row.id);
      return old && JSON.stringify(old) === JSON.stringify(row) ? old : row;
    });
    this._settled = { ...message, transcript: { ...message.transcript, rows } };
    this._lastSeq = Math.max(this._lastSeq, message.transcript.last_seq);
    this._changed();
  }

  /** A verdict without a settled message (`GET runs/{id}`): its status, and its marker if any. */
  verdict(info: IRunInfo): void {
    if (isFinalStatus(info.status)) {
      this._verdict = info;
      this._changed();
    }
  }

  private _fold(row: IJournalRow): void {
    const p = row.payload;
    switch (row.event) {
      case EVENTS.token:
      case EVENTS.reasoning: {
        const piece = row.event === EVENTS.token ? p.text : (p.text ?? p.reasoning ?? p.thinking);
        if (typeof piece === 'string' && piece) {
          row.event === EVENTS.token ? (this._text += piece) : (this._reasoning += piece);
          this._changed();
        }
        return;
      }
      case EVENTS.interimAssistant: {
        const piece = p.text;
        if (!p.already_streamed && typeof piece === 'string' && piece.trim()) {
          this._text += (this._text && !/\s$/.test(this._text) ? '\n\n' : '') + piece;
        }
        return this._flush();
      }
      case EVENTS.tool: {
        const tid = make.cardId(row, 'tid');
        return this._tools.has(tid) ? undefined : this._addCard(this._tools, tid, make.toolRow(this.runId, row));
      }
      case EVENTS.toolComplete:
        return this._completeTool(p);
      case EVENTS.approval:
        return this._approval(row);
      case EVENTS.clarify:
        return this._clarify(row);
      case EVENTS.plan:
        return this._plan(p);
      case EVENTS.usage:
        return this._once(make.usageRow(this.runId, p));
      case EVENTS.status:
        return this._status(row);
      case EVENTS.proposal: {
        const id = make.cardId(row, 'proposal_id');
        return this._proposals.has(id) ? undefined : this._addCard(this._proposals, id, make.proposalRow(this.runId, row));
      }
      case EVENTS.cellChange: {
        const change = make.cellChangeRow(this.runId, row);
        return change ? this._add(change) : undefined;
      }
      case EVENTS.compaction:
        return this._add({ ...make.noteRow(this.runId, row, 'compaction', make.text(p.text) ?? ''), level: 'info' });
    }
  }

  /** A note; the rows of one wait for the model (`kind: 'waiting'`, one `wait_id`) are one note, which later
   * rows update in place (same id and place; no text segment is closed). */
  private _status(row: IJournalRow): void {
    const words = make.text(row.payload.text);
    if (!words?.trim()) {
      return;
    }
    const note = make.noteRow(this.runId, row, 'status', words);
    const wait = make.waitId(row.payload);
    const shown = wait === null ? undefined : this._waits.get(wait);
    if (shown !== undefined) {
      return this._replace({ ...note, id: shown });
    }
    if (wait !== null) {
      this._waits.set(wait, note.id);
    }
    this._add(note);
  }

  /** Pair a completion by tid, else with the newest running card of that name without a provider tid. */
  private _completeTool(p: make.Payload): void {
    let card = p.tid ? this._tools.get(String(p.tid)) : undefined;
    if (!card || card.status !== 'running') {
      card = [...this._tools.values()]
        .reverse()
        .find(c => c.status === 'running' && c.tid.startsWith('journal-') && (!p.name || c.name === p.name));
    }
    if (card) {
      this._update(this._tools, card.tid, make.completedTool(card, p));
    }
  }

  private _approval(row: IJournalRow): void {
    const id = make.cardId(row, 'approval_id');
    const card = this._approvals.get(id);
    if (row.payload.status === 'pending') {
      return card ? undefined : this._addCard(this._approvals, id, make.approvalRow(this.runId, row));
    }
    if (card && card.status === 'pending') {
      const p = row.payload;
      const choice = make.text(p.choice) || UNANSWERED_CHOICE;
      const answered_by = make.answeredBy(p.answered_by);
      this._update(this._approvals, id, { ...card, status: 'resolved', choice, reason: make.text(p.reason), answered_by });
    }
  }

  private _clarify(row: IJournalRow): void {
    const id = make.cardId(row, 'clarify_id');
    const card = this._clarifies.get(id);
    if (row.payload.status !== 'resolved') {
      return card ? undefined : this._addCard(this._clarifies, id, make.clarifyRow(this.runId, row));
    }
    if (card && card.status === 'pending') {
      const p = row.payload;
      const resolved = { status: 'resolved' as const, answer: make.text(p.answer), reason: make.text(p.reason) };
      this._update(this._clarifies, id, { ...card, ...resolved, answered_by: make.answeredBy(p.answered_by) });
    }
  }

  /** The first plan is placed where it came; later ones replace its items there. */
  private _plan(p: make.Payload): void {
    const items = make.planItems(p);
    const id = `${this.runId}:plan`;
    if (this._index.has(id)) {
      this._replace({ kind: 'plan', id, items });
    } else if (items.length) {
      this._add({ kind: 'plan', id, items });
    }
  }

  /** A row of which a run has one: added the first time, updated in place after. */
  private _once(row: TranscriptRow): void {
    this._index.has(row.id) ? this._replace(row) : this._add(row);
  }

  /** The open segment's rows: reasoning first, blank parts none. */
  private _segmentRows(): TranscriptRow[] {
    const rows: TranscriptRow[] = [];
    const reasoning = this._reasoning.trim();
    const text = this._text.trim();
    if (reasoning) {
      rows.push({ kind: 'reasoning', id: `${this.runId}:r:${this._n}`, text: reasoning });
    }
    if (text) {
      rows.push({ kind: 'assistant', id: `${this.runId}:a:${this._n}`, text });
    }
    return rows;
  }

  /** Close the open segment; one that showed nothing keeps its ordinal for the next. */
  private _flush(): void {
    const rows = this._segmentRows();
    this._text = '';
    this._reasoning = '';
    if (rows.length) {
      this._n += 1;
      rows.forEach(row => this._append(row));
    }
  }

  private _add(row: TranscriptRow): void {
    this._flush();
    this._append(row);
  }

  private _addCard<T extends TranscriptRow>(cards: Map<string, T>, key: string, row: T): void {
    cards.set(key, row);
    this._add(row);
  }

  private _update<T extends TranscriptRow>(cards: Map<string, T>, key: string, row: T): void {
    cards.set(key, row);
    this._replace(row);
  }

  /** Rows as shown: at the end of a run, the open segment closed, unanswered cards resolved, the ending last. */
  private _compute(): TranscriptRow[] {
    const rows = [...this._rows, ...this._segmentRows()];
    const verdict = this._verdict;
    if (!this._terminal && !verdict) {
      return rows;
    }
    const closed = rows.map(row => this._closed(row, verdict));
    if (!this._terminal) {
      return verdict?.marker ? [...closed, make.terminalMarker(this.runId, { marker: verdict.marker })] : closed;
    }
    return [...closed, ...this._ending(this._terminal)];
  }

  /** A card at the end of the run: a question nobody answered is not answered (the agent had a deny, or
   * no answer); a tool still running ended with the run: done if the run completed, else error. */
  private _closed(row: TranscriptRow, verdict: IRunInfo | null): TranscriptRow {
    const resolved = { status: 'resolved' as const, reason: UNANSWERED_REASON, answered_by: NOBODY };
    if (row.kind === 'approval' && row.status === 'pending') {
      return { ...row, ...resolved, choice: UNANSWERED_CHOICE };
    }
    if (row.kind === 'clarify' && row.status === 'pending') {
      return { ...row, ...resolved, answer: null };
    }
    if (row.kind === 'tool' && row.status === 'running') {
      return { ...row, status: this._completed(verdict) ? 'done' : 'error' };
    }
    return row;
  }

  private _completed(verdict: IRunInfo | null): boolean {
    const row = this._terminal;
    if (!row) {
      return verdict?.status === 'completed';
    }
    const state = row.terminal_state ?? (row.event === EVENTS.done || row.event === EVENTS.streamEnd ? 'completed' : null);
    return state === 'completed' || state === 'tool_limit_reached';
  }

  /** A completed run ends with nothing, the tool limit with a warning note, anything else with its marker. */
  private _ending(row: IJournalRow): TranscriptRow[] {
    const p = row.payload ?? {};
    const state = row.terminal_state ?? (row.event === EVENTS.done || row.event === EVENTS.streamEnd ? 'completed' : null);
    if (state === 'tool_limit_reached') {
      return [{ ...make.noteRow(this.runId, row, 'status', make.text(p.message) ?? ''), level: 'warning' }];
    }
    return state === 'completed' ? [] : [make.terminalMarker(this.runId, p)];
  }

  private _append(row: TranscriptRow): void {
    this._index.set(row.id, this._rows.length);
    this._rows.push(row);
    this._changed();
  }

  private _replace(row: TranscriptRow): void {
    const at = this._index.get(row.id);
    if (at !== undefined) {
      this._rows[at] = row;
      this._changed();
    }
  }

  private _changed(): void {
    this._snapshot = null;
    this._version += 1;
  }

  private _rows: TranscriptRow[] = [];
  private _index = new Map<string, number>();
  private _tools = new Map<string, IToolRow>();
  private _approvals = new Map<string, IApprovalRow>();
  private _clarifies = new Map<string, IClarifyRow>();
  private _proposals = new Map<string, IProposalRow>();
  /** A wait's one note: its row id, by `wait_id`. */
  private _waits = new Map<string, string>();
  private _snapshot: readonly TranscriptRow[] | null = null;
  private _version = 0;
  private _lastSeq = 0;
  private _terminal: IJournalRow | null = null;
  private _settled: ISettledMessage | null = null;
  private _verdict: IRunInfo | null = null;
  /** The open text segment: its ordinal and the raw text and reasoning so far. */
  private _n = 0;
  private _text = '';
  private _reasoning = '';
}
