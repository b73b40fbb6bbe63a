/**
 * Transcript rows: the shape the server's fold and our live fold both produce
 * (docs/transcript.md). Every row has a `kind` and a deterministic `id`; ids
 * never collide across kinds. Rows are immutable: a change makes a new object,
 * so views skip rows whose identity did not change.
 */
import type { IAttachment } from './contract';

export interface IAssistantRow {
  kind: 'assistant';
  id: string;
  text: string;
}

export interface IReasoningRow {
  kind: 'reasoning';
  id: string;
  text: string;
}

export type ToolStatus = 'running' | 'done' | 'error';

export interface IToolRow {
  kind: 'tool';
  id: string;
  tid: string;
  name: string;
  args: { [key: string]: unknown } | null;
  preview: string | null;
  status: ToolStatus;
  duration_s: number | null;
}

export type CardStatus = 'pending' | 'resolved';

export interface IApprovalRow {
  kind: 'approval';
  id: string;
  approval_id: string;
  description: string | null;
  command: string | null;
  choices: string[];
  status: CardStatus;
  choice: string | null;
  reason: string | null;
}

export interface IClarifyRow {
  kind: 'clarify';
  id: string;
  clarify_id: string;
  question: string;
  choices: string[];
  status: CardStatus;
  answer: string | null;
}

export type PlanItemStatus = 'pending' | 'in_progress' | 'completed';

export interface IPlanItem {
  text: string;
  status: PlanItemStatus;
}

export interface IPlanRow {
  kind: 'plan';
  id: string;
  items: IPlanItem[];
}

export interface IUsageRow {
  kind: 'usage';
  id: string;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number | null;
  cost_usd: number | null;
  duration_s: number | null;
  model: string | null;
}

export interface INoteRow {
  kind: 'note';
  id: string;
  variant: 'status' | 'compaction';
  level: 'info' | 'warning';
  text: string;
}

export type ProposalAction = 'insert_below' | 'insert_end' | 'replace';
export type ProposalStatus = 'pending' | 'accepted' | 'rejected';

/** A cell the agent proposes; the user accepts (applied in the open notebook, never run) or rejects it. */
export interface IProposalRow {
  kind: 'proposal';
  id: string;
  proposal_id: string;
  action: ProposalAction;
  /** The target cell (insert_below, replace); null for insert_end. */
  cell_id: string | null;
  cell_type: 'code' | 'markdown';
  source: string;
  /** The target cell's source when proposed (replace), for the diff. */
  old_source: string | null;
  /** The server's record of the decision; the journal always says pending. */
  status: ProposalStatus;
}

export type MarkerVariant = 'interrupted' | 'cancelled' | 'error';

export interface IMarkerRow {
  kind: 'marker';
  id: string;
  variant: MarkerVariant;
  /** Markdown, worded by the server. */
  text: string;
  cause: string | null;
  /** Display only (a view sets it, a fold never does): this answer can be continued from here. */
  continuable?: boolean;
}

export type TranscriptRow =
  | IAssistantRow
  | IReasoningRow
  | IToolRow
  | IApprovalRow
  | IClarifyRow
  | IPlanRow
  | IUsageRow
  | INoteRow
  | IProposalRow
  | IMarkerRow;

/** The user's turn: shown by the sidebar only (a run's transcript starts after it). */
export interface IUserRow {
  kind: 'user';
  id: string;
  text: string;
  attachments?: IAttachment[];
  /** The turn was rebuilt by recovery after a restart. */
  recovered?: boolean;
  /** Sent, but the server has not settled the turn yet. */
  pending?: boolean;
}

/** What a stored (settled) reply may say about itself in the sidebar. */
export interface IStoredAssistantRow extends IAssistantRow {
  /** Kept from a cancelled or failed turn. */
  partial?: boolean;
  /** Rebuilt from the run journal by recovery. */
  recovered?: boolean;
}

export type DisplayRow = TranscriptRow | IUserRow | IStoredAssistantRow;

/** The plain text of a message `content`, which may be a list of parts. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') {
    return content;
  }
  if (!Array.isArray(content)) {
    return '';
  }
  return content
    .map(part =>
      typeof part === 'string' ? part : typeof part?.text === 'string' ? part.text : ''
    )
    .join('');
}

/** A short one-line rendering of tool arguments. */
export function formatArgs(args: { [key: string]: unknown } | null): string {
  if (!args) {
    return '';
  }
  return Object.entries(args)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');
}
