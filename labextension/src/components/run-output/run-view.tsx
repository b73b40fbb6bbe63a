/**
 * A run's transcript inside a notebook output. Until the server answers, or if
 * it does not know the run (a notebook saved elsewhere), the answer saved in
 * the output is shown with a quiet "saved" note: never an error in its place.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import React, { useState } from 'react';

import { IRunOutputPayload } from '../../api/contract';
import { RUN_CONTROLS as W } from '../../api/generated';
import { groupCellChanges } from '../../model/cell-changes';
import { RunFollower } from '../../model/run-follower';
import { CardActions } from '../cards/card-actions';
import { CellChangeCard } from '../cards/cell-change-card';
import { Markdown } from '../messages/markdown';
import { RunAutonomy } from './run-autonomy';
import { MessageRow } from '../messages/message-row';
import { useSignal } from '../use-signal';

const STATE_TEXT: { [state: string]: string } = {
  loading: 'loading…',
  queued: 'queued',
  live: 'streaming…',
  reconnecting: 'reconnecting…',
  failed: 'saved'
};

export interface IRunViewProps {
  follower: RunFollower | null;
  payload: IRunOutputPayload | null;
  /** The text saved in the output bundle. */
  savedMarkdown: string;
  rendermime: IRenderMimeRegistry;
  /** The answer this run continues, followed here when Continue was pressed in this cell (shown first). */
  earlier?: RunFollower | null;
  /** Continue this run's answer (a Continue button once it ended interrupted or stopped). */
  onContinue?: () => Promise<void>;
}

export function RunView(props: IRunViewProps): JSX.Element {
  const { follower, rendermime, savedMarkdown, payload, earlier } = props;
  useSignal(follower?.changed ?? null);
  const state = follower?.state ?? 'failed';
  // The earlier part's usage is summed into the answer's one footer when it ends (the server's bundle).
  const before = (earlier?.transcript.rows ?? []).filter(row => row.kind !== 'usage');
  const rows = [...before, ...(follower?.transcript.rows ?? [])];
  const ended = !!follower && state === 'ended';
  const status = ended ? follower.status : state === 'failed' ? (payload?.status ?? 'completed') : 'running';
  // A settled continuation's saved bundle is the server's whole answer; its own rows are only the last part.
  const whole = !earlier && !!payload?.continues && ended && !!savedMarkdown;
  const useSaved = whole || state === 'failed' || (rows.length === 0 && (!ended || !!savedMarkdown));
  const continuable = ended && (status === 'cancelled' || status === 'interrupted') && !!props.onContinue;
  const streamingId = follower?.transcript.streamingId ?? null;
  const live = !!follower && (state === 'live' || state === 'reconnecting') && status === 'running';

  return (
    <div
      className="jp-HermesRunOutput-body"
      data-testid="hermes-run-output"
      data-run-id={payload?.run_id ?? ''}
      data-status={status}
      data-follow-state={state}
      data-saved={state === 'failed' ? 'true' : 'false'}
    >
      <div className="jp-HermesRunOutput-header">
        <span className="jp-HermesRunOutput-label">Hermes</span>
        <RunAutonomy payload={payload} />
        <span
          className={`jp-HermesPill jp-mod-${state === 'failed' ? 'saved' : status}`}
          data-testid="hermes-run-status"
          title={state === 'failed' ? savedTitle(follower) : undefined}
        >
          {STATE_TEXT[state] ?? status}
        </span>
        {follower && (live || state === 'queued') ? <StopButton follower={follower} queued={state === 'queued'} /> : null}
        {continuable ? <ContinueButton onContinue={props.onContinue!} /> : null}
      </div>
      {useSaved ? (
        savedMarkdown ? (
          <Markdown text={savedMarkdown} rendermime={rendermime} className="jp-HermesRunOutput-saved" />
        ) : null
      ) : (
        <CardActions.Provider value={follower?.cardActions ?? {}}>
          {groupCellChanges(rows).map(row =>
            row.kind === 'cell_changes' ? (
              <CellChangeCard key={row.id} group={row} />
            ) : (
              <MessageRow key={row.id} row={row} rendermime={rendermime} streaming={row.id === streamingId} />
            )
          )}
        </CardActions.Provider>
      )}
    </div>
  );
}

/**
 * A button's one server action: busy from the click on (the view moves on once it succeeds),
 * and clickable again with the reason when it failed.
 */
function useAttempt(act: () => Promise<unknown>): [boolean, string | null, () => void] {
  const [busy, setBusy] = useState(false);
  const [failed, setFailed] = useState<string | null>(null);
  const run = () => {
    setBusy(true);
    setFailed(null);
    act().catch(error => {
      setBusy(false);
      setFailed(error instanceof Error ? error.message : String(error));
    });
  };
  return [busy, failed, run];
}

/** Stop for a live run: cancels it on the server; the cell then shows the server's settled rows.
 * For a queued run the same call takes it off the queue. */
function StopButton(props: { follower: RunFollower; queued: boolean }): JSX.Element {
  const [stopping, failed, stop] = useAttempt(() => props.follower.stop());
  return (
    <button
      className="jp-Button jp-mod-warn jp-mod-styled jp-HermesRunOutput-stop"
      data-testid="hermes-run-stop"
      disabled={stopping}
      title={failed ? `The run could not be stopped: ${failed}` : props.queued ? W.unqueueTitle : W.stopTitle}
      onClick={stop}
    >
      {stopping ? W.stopping : failed ? W.stopAgain : props.queued ? W.unqueue : W.stop}
    </button>
  );
}

/** Continue for an answer that ended interrupted or stopped: its rest streams into this cell. */
function ContinueButton(props: { onContinue: () => Promise<void> }): JSX.Element {
  const [busy, failed, click] = useAttempt(props.onContinue);
  return (
    <button
      className="jp-Button jp-mod-accept jp-mod-styled jp-HermesRunOutput-continue"
      data-testid="hermes-run-continue"
      disabled={busy}
      title={failed ?? W.continueTitle}
      onClick={click}
    >
      {busy ? W.continuing : failed ? W.continueAgain : W.continue}
    </button>
  );
}

/** The details of a saved output's note (hover), in plain words. */
function savedTitle(follower: RunFollower | null): string {
  if (!follower || follower.notFound) {
    return 'This is the answer saved in the notebook; this Jupyter server has no record of that conversation.';
  }
  return `The answer saved in this notebook; the live run cannot be shown (${follower.error ?? 'no connection'}).`;
}
