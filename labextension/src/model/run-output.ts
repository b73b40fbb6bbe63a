/**
 * Hermes run outputs in a notebook (docs/notebook.md): reading their run+json
 * payload, and fetching the bundle the server renders for a settled run. The
 * server is the one writer of cell outputs; nothing here builds a bundle.
 */
import { HermesApiError, HermesClient } from '../api/client';
import { IRunOutputPayload, MimeBundle, RUN_MIME_TYPE, isFinalStatus } from '../api/contract';

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
  const read: IRunOutputPayload = {
    run_id: payload.run_id,
    session_id: typeof payload.session_id === 'string' ? payload.session_id : '',
    seq: typeof payload.seq === 'number' ? payload.seq : 0,
    status: typeof payload.status === 'string' ? payload.status : 'running'
  };
  if (typeof payload.continues === 'string' && payload.continues) {
    read.continues = payload.continues;
  }
  return read;
}

/** True if the bundle is a hermes run output whose status is not final. */
export function isUnfinishedRun(data: MimeBundle | null | undefined): boolean {
  const payload = readRunPayload(data);
  return !!payload && !isFinalStatus(payload.status);
}

/** The text a saved output shows without the server: its markdown, else its plain text. */
export function savedText(data: MimeBundle | null | undefined): string {
  const text = data?.['text/markdown'] ?? data?.['text/plain'];
  return typeof text === 'string' ? text : '';
}

/**
 * The server's bundle of a settled run, or null while the run is live (or
 * unknown to this server: then the saved output is left as it is).
 */
export async function settledBundle(client: HermesClient, runId: string): Promise<MimeBundle | null> {
  try {
    const info = await client.getRun(runId);
    return isFinalStatus(info.status) ? await client.getRunBundle(runId) : null;
  } catch (error) {
    if (error instanceof HermesApiError && error.isNotFound) {
      return null;
    }
    throw error;
  }
}
