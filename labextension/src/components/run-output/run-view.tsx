/**
 * A run's transcript inside a notebook output. Until the server answers (or if
 * it cannot), the markdown saved in the output is shown instead: never an error
 * in place of the text.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import React from 'react';

import { RunFollower } from '../../model/run-follower';
import { MessageRow } from '../messages/message-row';
import { ApprovalContext } from '../approval-context';
import { Markdown } from '../messages/markdown';
import { useSignal } from '../use-signal';

const STATE_TEXT: { [state: string]: string } = {
  loading: 'loading…',
  live: 'streaming…',
  reconnecting: 'reconnecting…'
};

export interface IRunViewProps {
  follower: RunFollower | null;
  runId: string;
  /** The text saved in the output bundle. */
  savedMarkdown: string;
  rendermime: IRenderMimeRegistry;
}

export function RunView(props: IRunViewProps): JSX.Element {
  const { follower, rendermime, savedMarkdown } = props;
  useSignal(follower?.changed ?? null);
  const state = follower?.state ?? 'failed';
  const rows = follower?.transcript.rows ?? [];
  const status = follower && state === 'ended' ? follower.status : state === 'failed' ? 'unavailable' : 'running';
  const useSaved = rows.length === 0 && (state !== 'ended' || !!savedMarkdown);

  return (
    <div
      className="jp-HermesRunOutput-body"
      data-testid="hermes-run-output"
      data-run-id={props.runId}
      data-status={status}
      data-follow-state={state}
    >
      <div className="jp-HermesRunOutput-header">
        <span className="jp-HermesRunOutput-label">Hermes</span>
        <span className={`jp-HermesPill jp-mod-${status}`} data-testid="hermes-run-status">
          {STATE_TEXT[state] ?? status}
        </span>
      </div>
      {useSaved ? (
        savedMarkdown ? (
          <Markdown text={savedMarkdown} rendermime={rendermime} className="jp-HermesRunOutput-saved" />
        ) : null
      ) : (
        <ApprovalContext.Provider value={follower?.answerApproval ?? null}>
          {rows.map(row => <MessageRow key={row.id} row={row} rendermime={rendermime} />)}
        </ApprovalContext.Provider>
      )}
      {state === 'failed' && follower?.error && (
        <div className="jp-HermesRunOutput-notice" data-testid="hermes-run-notice">
          Live run unavailable: {follower.error}. Showing the output saved in the notebook.
        </div>
      )}
    </div>
  );
}
