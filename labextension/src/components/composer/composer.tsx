/**
 * The composer: Enter sends, Shift+Enter breaks the line; Retry and Undo act
 * on the last turn when idle (and are hidden while a turn runs). While a turn streams the box stays usable: Send
 * queues the message behind the running turn, Steer (when the backend can)
 * hands it to that turn, and Stop stops it.
 * Keyboard: ArrowUp in an empty box recalls the prompts sent before (ArrowDown
 * goes back), Escape stops the running turn, or, when none runs, gives the focus
 * back to the notebook (docs/sidebar.md). `@` opens a list of variables, cells and files to attach
 * (mentions.tsx); while it is open its keys come first.
 */
import React, { useRef, useState } from 'react';

import type { SendMode } from '../../api/contract';
import type { AttachmentsModel } from '../../model/attachments';
import { AttachmentChips } from './attachment-chips';
import { PromptHistory } from './history';
import { useMentions } from './mentions';

export interface IComposerProps {
  streaming: boolean;
  canEdit: boolean;
  /** Offer Steer while a turn streams (the backend can take text mid-turn). */
  canSteer?: boolean;
  /** Shown at the start of the action row (the model picker). */
  picker?: React.ReactNode;
  /** Resolves false when the message was not accepted (the text is restored). */
  onSend: (text: string, mode: SendMode) => Promise<boolean>;
  onStop: () => void;
  onRetry: () => void;
  onUndo: () => void;
  /** Escape while no turn runs: leave the composer (the sidebar gives the focus back to the notebook). */
  onLeave?: () => void;
  /** What the next message carries (chips above the box). */
  attachments?: AttachmentsModel;
}

/** The draft and its keys: send (or queue, or steer), recall earlier prompts, Escape to stop or leave. */
function useDraft(props: IComposerProps, input: React.RefObject<HTMLTextAreaElement>) {
  const { streaming } = props;
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const history = useRef(new PromptHistory()).current;
  const mentions = useMentions(text, setText, input, props.attachments);

  const send = async (mode: SendMode = 'queue') => {
    const message = text.trim();
    if (!message || sending) {
      return;
    }
    setSending(true);
    history.add(message);
    setText('');
    try {
      if (!(await props.onSend(message, mode))) {
        setText(current => current || message);
      }
    } finally {
      setSending(false);
    }
  };

  const onKeyDown = (event: React.KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.nativeEvent.isComposing || mentions.onKeyDown(event)) {
      return;
    }
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      void send();
    } else if (event.key === 'Escape' && (streaming || props.onLeave)) {
      event.preventDefault();
      event.stopPropagation();
      (streaming ? props.onStop : props.onLeave!)();
    } else if (event.key === 'ArrowUp' || event.key === 'ArrowDown') {
      const recalled =
        event.key === 'ArrowUp' ? history.older(text) : history.newer(text);
      if (recalled !== null) {
        event.preventDefault();
        setText(recalled);
      }
    }
  };

  return { text, setText, sending, send, onKeyDown, mentions };
}

export function Composer(props: IComposerProps): JSX.Element {
  const { streaming } = props;
  const input = useRef<HTMLTextAreaElement>(null);
  const { text, setText, sending, send, onKeyDown, mentions } = useDraft(props, input);

  return (
    <div className="jp-HermesComposer">
      {props.attachments && <AttachmentChips model={props.attachments} disabled={sending} />}
      {mentions.list}
      <textarea
        ref={input}
        {...mentions.inputProps}
        className="jp-HermesComposer-input"
        data-testid="hermes-composer"
        placeholder={
          streaming
            ? 'Ask next… (Enter queues it until this answer ends)'
            : 'Ask Hermes… (Enter sends, Shift+Enter adds a line, ↑ recalls, @ attaches)'
        }
        aria-label="Message to Hermes"
        rows={3}
        value={text}
        onChange={event => setText(event.target.value)}
        onKeyDown={onKeyDown}
      />
      {props.picker && <div className="jp-HermesComposer-options">{props.picker}</div>}
      <ComposerActions {...props} canSend={text.trim() !== '' && !sending} send={send} />
    </div>
  );
}

/** The action row: Retry and Undo when idle; Stop, Steer and Queue while a turn runs; Send. */
function ComposerActions(props: IComposerProps & { canSend: boolean; send: (mode?: SendMode) => Promise<void> }): JSX.Element {
  const { streaming, canSend, send } = props;
  return (
    <div className="jp-HermesComposer-actions">
      {!streaming && <EditButtons canEdit={props.canEdit} onRetry={props.onRetry} onUndo={props.onUndo} />}
      <span className="jp-HermesComposer-spacer" />
      {streaming && (
        <button
          className="jp-Button jp-mod-warn jp-mod-styled"
          data-testid="hermes-stop"
          title="Stop the answer being written (Escape)"
          onClick={props.onStop}
        >
          Stop
        </button>
      )}
      {streaming && props.canSteer && (
        <button
          className="jp-Button jp-mod-styled"
          data-testid="hermes-steer"
          title="Add this to the answer being written, without stopping it"
          disabled={!canSend}
          onClick={() => void send('steer')}
        >
          Steer
        </button>
      )}
      <button
        className="jp-Button jp-mod-accept jp-mod-styled"
        data-testid="hermes-send"
        title={streaming ? 'Queue this message: it is sent when the answer being written ends' : undefined}
        disabled={!canSend}
        onClick={() => void send()}
      >
        {streaming ? 'Queue' : 'Send'}
      </button>
    </div>
  );
}

function EditButtons(props: { canEdit: boolean; onRetry: () => void; onUndo: () => void }): JSX.Element {
  return (
    <>
      <button
        className="jp-Button jp-mod-minimal jp-mod-styled"
        data-testid="hermes-retry"
        title="Ask the last question again"
        disabled={!props.canEdit}
        onClick={props.onRetry}
      >
        Retry
      </button>
      <button
        className="jp-Button jp-mod-minimal jp-mod-styled"
        data-testid="hermes-undo"
        title="Remove the last question and its answer"
        disabled={!props.canEdit}
        onClick={props.onUndo}
      >
        Undo
      </button>
    </>
  );
}
