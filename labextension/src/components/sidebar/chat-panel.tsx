/**
 * The open session: status line, recovery banner, errors, transcript, composer.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import React from 'react';

import { ChatModel } from '../../model/chat';
import { CardActions } from '../cards/card-actions';
import { TranscriptView } from '../messages/transcript-view';
import { Composer } from '../composer/composer';
import { ModelPicker } from '../composer/model-picker';
import { useSignal } from '../use-signal';
import { AllowedAlways } from './allowed-always';
import { QueuedList } from './queued-list';

const STATUS_TEXT: { [status: string]: string } = {
  loading: 'Loading…',
  streaming: 'Streaming…',
  reconnecting: 'Connection lost, reconnecting…'
};

export function ChatPanel(props: {
  model: ChatModel;
  rendermime: IRenderMimeRegistry;
}): JSX.Element {
  const { model, rendermime } = props;
  useSignal(model.changed);
  const status = model.status;
  const streaming = status === 'streaming' || status === 'reconnecting';
  const canEdit = !!model.session && (model.session.messages ?? []).length > 0;

  return (
    <div className="jp-HermesChat" data-testid="hermes-chat" data-status={status}>
      <div className="jp-HermesChat-status" data-testid="hermes-status" data-status={status}>
        {STATUS_TEXT[status] ?? ''}
      </div>
      {model.showRecoveryBanner && (
        <div className="jp-HermesBanner" data-testid="hermes-recovery-banner" role="alert">
          <span>
            The Jupyter server restarted while a turn was running. What the run
            journal held was recovered; the interrupted turn did not continue.
          </span>
          <button
            className="jp-HermesIconButton"
            data-testid="hermes-banner-dismiss"
            title="Dismiss"
            onClick={() => model.dismissBanner()}
          >
            ✕
          </button>
        </div>
      )}
      {model.error && (
        <div className="jp-HermesError" data-testid="hermes-error" role="alert">
          <span>
            {model.error.text}
            <details className="jp-HermesError-details">
              <summary>Details</summary>
              {model.error.details}
            </details>
          </span>
          <button
            className="jp-HermesIconButton"
            title="Dismiss"
            onClick={() => model.clearError()}
          >
            ✕
          </button>
        </div>
      )}
      {status === 'empty' ? (
        <div className="jp-HermesChat-empty">
          Start a new session, or just type a message below.
        </div>
      ) : (
        <>
          {status === 'idle' && model.rows.length === 0 && <EmptySession demo={model.session?.backend === 'demo'} />}
        <CardActions.Provider value={model.cardActions}>
          <TranscriptView
            rows={model.rows}
            rendermime={rendermime}
            resetKey={model.sessionId ?? ''}
            streamingId={model.streamingId}
          />
        </CardActions.Provider>
        <QueuedList queued={model.queued} onCancel={runId => void model.cancelQueued(runId)} />
        </>
      )}
      <Composer
        streaming={streaming}
        canEdit={canEdit}
        canSteer={model.canSteer}
        picker={
          model.session ? (
            <ModelPicker models={model.models} value={model.model} onChange={m => void model.setModel(m)} />
          ) : null
        }
        onSend={(text, mode) => model.send(text, mode)}
        onStop={() => void model.stop()}
        onRetry={() => void model.retry()}
        onUndo={() => void model.undo()}
        attachments={model.attachments}
      />
      <AllowedAlways client={model.client} />
    </div>
  );
}

/** A session with nothing in it yet: what to do next, not a blank panel. */
function EmptySession(props: { demo: boolean }): JSX.Element {
  return (
    <div className="jp-HermesChat-empty" data-testid="hermes-empty-session">
      <p>This session is empty. Ask a question below and press Enter to send it.</p>
      <p>
        Answers stream in here; a code cell starting with <code>%%hermes</code> in a notebook
        talks to Hermes too.
      </p>
      {props.demo && (
        <p>
          This is the offline demo agent: try <code>count to 20</code> or <code>use a tool</code>.
        </p>
      )}
    </div>
  );
}
