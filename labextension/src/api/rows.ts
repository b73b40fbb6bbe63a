/**
 * Transcript rows: the shape the server's fold and our live fold both produce
 * (docs/transcript.md). Every row has a `kind` and a deterministic `id`; ids
 * never collide across kinds. Rows are immutable: a change makes a new object,
 * so views skip rows whose identity did not change. The rows' types are
 * generated from the Python rows (`generated.ts`, docs/extending.md).
 */
import type { IAttachment } from './contract';

export type {
  AnsweredByKind,
  CardStatus,
  CellAction,
  CellLanded,
  CellReview,
  IAnsweredBy,
  IApprovalRow,
  IAssistantRow,
  ICellChangeRow,
  IClarifyRow,
  INoteRow,
  IPlanItem,
  IPlanRow,
  IReasoningRow,
  IToolRow,
  IUsageRow,
  MarkerVariant,
  NoteLevel,
  NoteVariant,
  PlanStatus as PlanItemStatus,
  ProposalAction,
  ProposalStatus,
  IProposalRow,
  ToolStatus,
  TranscriptRow
} from './generated';
import type { IAssistantRow, IMarkerRow as IFoldedMarkerRow, TranscriptRow } from './generated';

/** A marker as a view shows it: `continuable` is set by views (never by a fold) on the one marker
 * whose answer Continue can pick up. */
export interface IMarkerRow extends IFoldedMarkerRow {
  continuable?: boolean;
}

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

export type DisplayRow = TranscriptRow | IUserRow | IStoredAssistantRow | IMarkerRow;

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
