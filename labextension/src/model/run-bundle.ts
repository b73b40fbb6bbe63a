/**
 * A run's transcript → the static notebook bundle of a finished run
 * (CONTRACT §8): `application/vnd.hermes.run+json` with the final status,
 * `text/markdown` and `text/plain` of the text. Pure; no widget view.
 */
import { IRunOutputPayload, RUN_MIME_TYPE, isFinalStatus } from '../api/contract';
import { DisplayRow, formatArgs } from './rows';
import { ITranscript } from './transcript';

export type MimeBundle = { [mime: string]: unknown };

/** The run+json payload of a bundle, or null if it carries none or a malformed one. */
export function readRunPayload(data: MimeBundle | null | undefined): IRunOutputPayload | null {
  const value = data?.[RUN_MIME_TYPE];
  if (!value || typeof value !== 'object') {
    return null;
  }
  const payload = value as Partial<IRunOutputPayload>;
  if (typeof payload.run_id !== 'string' || !payload.run_id) {
    return null;
  }
  return {
    run_id: payload.run_id,
    session_id: typeof payload.session_id === 'string' ? payload.session_id : '',
    seq: typeof payload.seq === 'number' ? payload.seq : 0,
    status: typeof payload.status === 'string' ? payload.status : 'running'
  };
}

/** True if the bundle is a hermes run output whose status is not final. */
export function isUnfinishedRun(data: MimeBundle | null | undefined): boolean {
  const payload = readRunPayload(data);
  return !!payload && !isFinalStatus(payload.status);
}

export function buildRunBundle(
  payload: IRunOutputPayload,
  transcript: ITranscript
): MimeBundle {
  const markdown = transcriptMarkdown(transcript.rows);
  return {
    [RUN_MIME_TYPE]: {
      run_id: payload.run_id,
      session_id: payload.session_id,
      seq: Math.max(payload.seq, transcript.lastSeq),
      status: payload.status
    },
    'text/markdown': markdown,
    'text/plain': transcriptPlain(transcript.rows)
  };
}

export function transcriptMarkdown(rows: readonly DisplayRow[]): string {
  const parts: string[] = [];
  for (const row of rows) {
    switch (row.kind) {
      case 'assistant':
        if (row.text.trim()) {
          parts.push(row.text.trim());
        }
        break;
      case 'tool': {
        const state = !row.done ? 'running' : row.isError ? 'failed' : 'done';
        const args = formatArgs(row.args);
        parts.push(`> 🔧 \`${row.name}\`${args ? ` (${oneLine(args)})` : ''}: ${state}`);
        break;
      }
      case 'marker':
        parts.push(row.text.trim());
        break;
      case 'user':
        break;
    }
  }
  return parts.join('\n\n');
}

export function transcriptPlain(rows: readonly DisplayRow[]): string {
  const parts: string[] = [];
  for (const row of rows) {
    if (row.kind === 'assistant' && row.text.trim()) {
      parts.push(row.text.trim());
    } else if (row.kind === 'tool') {
      parts.push(`[tool ${row.name}${row.done ? (row.isError ? ' failed' : '') : ' running'}]`);
    } else if (row.kind === 'marker') {
      parts.push(row.text.replace(/\*\*/g, '').trim());
    }
  }
  return parts.join('\n\n');
}

function oneLine(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, ' ').replace(/`/g, "'");
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
