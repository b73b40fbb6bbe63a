/**
 * Display rows: what the transcript views render, whether they come from a
 * settled session (session-rows.ts) or from a live journal (transcript.ts).
 *
 * Rows are immutable: a change makes a new object, so views can skip rows
 * whose identity did not change.
 */
import { IAttachment, InterruptionCause } from '../api/contract';

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

export interface IAssistantRow {
  kind: 'assistant';
  id: string;
  text: string;
  reasoning: string;
  /** Still receiving tokens. */
  streaming?: boolean;
  /** Kept from a cancelled or failed turn. */
  partial?: boolean;
  /** Rebuilt from the run journal by recovery. */
  recovered?: boolean;
}

/** An approval the agent asked for: shown as a card, answered with its buttons while pending. */
export interface IApproval {
  id: string;
  runId: string;
  options: string[];
  /** How it was answered (`allow_once`, `deny`), once resolved. */
  choice?: string;
  reason?: string;
}

export interface IToolRow {
  kind: 'tool';
  id: string;
  tid: string;
  name: string;
  args: { [key: string]: unknown } | null;
  preview: string;
  done: boolean;
  isError: boolean;
  duration: number | null;
  approval?: IApproval;
}

export type MarkerVariant = 'interrupted' | 'cancel' | 'error' | 'info';

export interface IMarkerRow {
  kind: 'marker';
  id: string;
  variant: MarkerVariant;
  /** Markdown. */
  text: string;
  cause?: InterruptionCause | string;
  /** A recovery retry is still pending on the server. */
  pendingRetry?: boolean;
}

export type DisplayRow = IUserRow | IAssistantRow | IToolRow | IMarkerRow;

/** The plain text of a message `content`, which may be a list of parts. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') {
    return content;
  }
  if (Array.isArray(content)) {
    return content
      .map(part =>
        part && typeof part === 'object' && typeof part.text === 'string'
          ? part.text
          : typeof part === 'string'
            ? part
            : ''
      )
      .join('');
  }
  return '';
}

/** A short one-line rendering of tool arguments. */
export function formatArgs(args: { [key: string]: unknown } | null): string {
  if (!args) {
    return '';
  }
  return Object.entries(args)
    .map(([key, value]) => {
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      return `${key}=${text}`;
    })
    .join(', ');
}
