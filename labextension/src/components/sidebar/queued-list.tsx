/**
 * Messages waiting for the running answer to end, oldest first, each with a
 * way to take it off the queue (it is then never sent).
 */
import React from 'react';

import { IQueuedTurn } from '../../api/contract';

export function QueuedList(props: {
  queued: readonly IQueuedTurn[];
  onCancel: (runId: string) => void;
}): JSX.Element | null {
  if (props.queued.length === 0) {
    return null;
  }
  return (
    <ol className="jp-HermesQueue" data-testid="hermes-queue" aria-label="Queued messages">
      {props.queued.map(item => (
        <li key={item.run_id} className="jp-HermesQueue-item" data-testid="hermes-queued" data-run-id={item.run_id}>
          <span className="jp-HermesQueue-label">queued</span>
          <span className="jp-HermesQueue-text">{item.message}</span>
          <button
            className="jp-HermesIconButton"
            data-testid="hermes-queued-cancel"
            title="Take this message off the queue"
            aria-label="Take this message off the queue"
            onClick={() => props.onCancel(item.run_id)}
          >
            ✕
          </button>
        </li>
      ))}
    </ol>
  );
}
