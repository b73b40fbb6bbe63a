/**
 * Client-side `notebooks/recover` for one output: the final bundle of a run
 * whose saved status is not final, rebuilt from its journal (CONTRACT §8).
 */
import { HermesApiError, HermesClient } from '../api/client';
import { IMessageRow, IRunOutputPayload, isFinalStatus } from '../api/contract';
import { isInterruptedMessage } from './markers';
import { MimeBundle, buildRunBundle } from './run-bundle';
import { ISettledMarker, foldEvents, settleWithoutTerminal } from './transcript';

/**
 * The final bundle of `payload`'s run, or null while the run is still live on
 * the server (or unknown to it: then the saved output is left alone).
 *
 * `cause` names the interruption when the server settled the run without a
 * terminal row of its own (e.g. `kernel_restart` right after a restart).
 */
export async function recoverRunBundle(
  client: HermesClient,
  payload: IRunOutputPayload,
  cause = 'unknown'
): Promise<MimeBundle | null> {
  let info;
  try {
    info = await client.getRun(payload.run_id);
  } catch (error) {
    if (error instanceof HermesApiError && error.isNotFound) {
      return null;
    }
    throw error;
  }
  if (!isFinalStatus(info.status)) {
    return null;
  }
  const events = await client.readAllEvents(payload.run_id, 0);
  let transcript = foldEvents(events, payload.run_id);
  if (!transcript.terminal) {
    const sessionId = info.session_id || payload.session_id;
    const marker =
      info.status === 'interrupted'
        ? await findServerMarker(client, sessionId, payload.run_id)
        : null;
    transcript = settleWithoutTerminal(transcript, info.status, marker ?? { cause });
  }
  return buildRunBundle(
    {
      run_id: payload.run_id,
      session_id: info.session_id || payload.session_id,
      seq: Math.max(info.last_seq ?? 0, payload.seq),
      status: info.status
    },
    transcript
  );
}

/**
 * The interrupted marker the server wrote into the session for `runId`: the
 * first marker after the rows recovered from that run, else the session's last
 * row if it is a marker. Null when there is none or the session cannot be read.
 */
export async function findServerMarker(
  client: HermesClient,
  sessionId: string,
  runId: string
): Promise<ISettledMarker | null> {
  let messages: IMessageRow[];
  try {
    messages = (await client.getSession(sessionId)).messages ?? [];
  } catch {
    return null;
  }
  let from = -1;
  messages.forEach((row, index) => {
    const tags = row as unknown as { [key: string]: unknown };
    if (
      tags._run_id === runId ||
      tags._recovered_stream_id === runId ||
      tags._journal_retry_stream_id === runId
    ) {
      from = index;
    }
  });
  const candidates =
    from >= 0 ? messages.slice(from) : messages.slice(messages.length - 1);
  const marker = candidates.find(isInterruptedMessage);
  if (!marker || typeof marker.content !== 'string') {
    return null;
  }
  return { cause: String(marker.interruption_cause ?? 'unknown'), text: marker.content };
}
