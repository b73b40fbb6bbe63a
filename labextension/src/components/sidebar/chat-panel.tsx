/**
 * The open session: status line, the sidebar's one notice (model/notice.ts), transcript, composer.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import React from 'react';

import { setAutonomy } from '../../api/notebook-edits';
import type { IChatModel } from '../../model/chat-model';
import { pickNotice } from '../../model/notice';
import { SessionsModel } from '../../model/sessions';
import { CardActions } from '../cards/card-actions';
import { TranscriptView } from '../messages/transcript-view';
import { AutonomyPicker } from '../composer/autonomy-picker';
import { Composer } from '../composer/composer';
import { ModelPicker } from '../composer/model-picker';
import { openModelSettings } from '../settings/open-model-settings';
import { useSignal } from '../use-signal';
import { AllowedAlways } from './allowed-always';
import { Notice } from './notice';
import { QueuedList } from './queued-list';

const STATUS_TEXT: { [status: string]: string } = {
  loading: 'Loading…',
  streaming: 'Streaming…',
  reconnecting: 'Connection lost, reconnecting…'
};

export function ChatPanel(props: {
  model: IChatModel;
  rendermime: IRenderMimeRegistry;
  /** The session list, whose failures share the one notice. */
  sessions?: SessionsModel;
  /** Escape in an idle composer: give the focus back to the notebook. */
  onLeave?: () => void;
}): JSX.Element {
  const { model, rendermime, sessions } = props;
  useSignal(model.changed);
  useSignal(sessions?.changed ?? null);
  const notice = pickNotice({
    sessions: sessions?.error ?? null,
    chat: model.error,
    recovered: model.showRecoveryBanner
  });
  const status = model.status;
  const streaming = status === 'streaming' || status === 'reconnecting';
  const canEdit = model.hasTurns;

  return (
    <div className="jp-HermesChat" data-testid="hermes-chat" data-status={status}>
      <div className="jp-HermesChat-status" data-testid="hermes-status" data-status={status}>
        {notice?.kind === 'offline' ? '' : (STATUS_TEXT[status] ?? '')}
      </div>
      <Notice notice={notice} onDismiss={what => (what === 'error' ? model.clearError() : model.dismissBanner())} />
      {status === 'empty' ? (
        <div className="jp-HermesChat-empty">
          Start a new session, or just type a message below.
        </div>
      ) : (
        <SessionBody model={model} rendermime={rendermime} />
      )}
      <Composer
        streaming={streaming}
        canEdit={canEdit}
        canSteer={model.canSteer}
        picker={model.session ? <ComposerOptions model={model} /> : null}
        onSend={(text, mode) => model.send(text, mode)}
        onStop={() => void model.stop()}
        onRetry={() => void model.retry()}
        onUndo={() => void model.undo()}
        onLeave={props.onLeave}
        attachments={model.attachments}
      />
      <AllowedAlways client={model.client} />
    </div>
  );
}

/** The open session's rows: a hint when it is empty, the transcript, the queued messages. */
function SessionBody(props: { model: IChatModel; rendermime: IRenderMimeRegistry }): JSX.Element {
  const { model } = props;
  return (
    <>
      {model.status === 'idle' && model.rows.length === 0 && <EmptySession demo={model.session?.backend === 'demo'} />}
      <CardActions.Provider value={model.cardActions}>
        <TranscriptView
          rows={model.rows}
          rendermime={props.rendermime}
          resetKey={model.sessionId ?? ''}
          streamingId={model.streamingId}
        />
      </CardActions.Provider>
      <QueuedList queued={model.queued} onCancel={runId => void model.cancelQueued(runId)} />
    </>
  );
}

/** The composer's options row: the autonomy picker (a notebook's session) and the model picker. */
function ComposerOptions(props: { model: IChatModel }): JSX.Element {
  const { model } = props;
  return (
    <>
      {model.session?.notebook_path && (
        <AutonomyPicker
          session={model.session}
          onChange={level => setAutonomy(model.client, model.session!.session_id, level)}
        />
      )}
      <ModelPicker
        models={model.models}
        value={model.model}
        onChange={m => void model.setModel(m)}
        onOpenSettings={() => void openModelSettings(model)}
      />
    </>
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
