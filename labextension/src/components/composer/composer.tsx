/**
 * The composer: Enter sends, Shift+Enter breaks the line; Stop replaces Send
 * while a turn streams; Retry and Undo act on the last turn when idle.
 * Keyboard: ArrowUp in an empty box recalls the prompts sent before (ArrowDown
 * goes back), Escape stops the running turn.
 */
import React, { useRef, useState } from 'react';

import type { AttachmentsModel } from '../../model/attachments';
import { AttachmentChips } from './attachment-chips';
import { PromptHistory } from './history';

export interface IComposerProps {
  streaming: boolean;
  canEdit: boolean;
  /** Resolves false when the message was not accepted (the text is restored). */
  onSend: (text: string) => Promise<boolean>;
  onStop: () => void;
  onRetry: () => void;
  onUndo: () => void;
  /** What the next message carries (chips above the box). */
  attachments?: AttachmentsModel;
}

export function Composer(props: IComposerProps): JSX.Element {
  const { streaming, canEdit } = props;
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const history = useRef(new PromptHistory()).current;

  const send = async () => {
    const message = text.trim();
    if (!message || streaming || sending) {
      return;
    }
    setSending(true);
    history.add(message);
    setText('');
    try {
      if (!(await props.onSend(message))) {
        setText(current => current || message);
      }
    } finally {
      setSending(false);
    }
  };

  const onKeyDown = (event: React.KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.nativeEvent.isComposing) {
      return;
    }
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      void send();
    } else if (event.key === 'Escape' && streaming) {
      event.preventDefault();
      event.stopPropagation();
      props.onStop();
    } else if (event.key === 'ArrowUp' || event.key === 'ArrowDown') {
      const recalled =
        event.key === 'ArrowUp' ? history.older(text) : history.newer(text);
      if (recalled !== null) {
        event.preventDefault();
        setText(recalled);
      }
    }
  };

  return (
    <div className="jp-HermesComposer">
      {props.attachments && <AttachmentChips model={props.attachments} disabled={sending} />}
      <textarea
        className="jp-HermesComposer-input"
        data-testid="hermes-composer"
        placeholder="Ask Hermes… (Enter sends, Shift+Enter adds a line, ↑ recalls)"
        aria-label="Message to Hermes"
        rows={3}
        value={text}
        onChange={event => setText(event.target.value)}
        onKeyDown={onKeyDown}
      />
      <div className="jp-HermesComposer-actions">
        <button
          className="jp-Button jp-mod-minimal jp-mod-styled"
          data-testid="hermes-retry"
          title="Ask the last question again"
          disabled={streaming || !canEdit}
          onClick={props.onRetry}
        >
          Retry
        </button>
        <button
          className="jp-Button jp-mod-minimal jp-mod-styled"
          data-testid="hermes-undo"
          title="Remove the last question and its answer"
          disabled={streaming || !canEdit}
          onClick={props.onUndo}
        >
          Undo
        </button>
        <span className="jp-HermesComposer-spacer" />
        {streaming ? (
          <button
            className="jp-Button jp-mod-warn jp-mod-styled"
            data-testid="hermes-stop"
            title="Stop the answer being written (Escape)"
            onClick={props.onStop}
          >
            Stop
          </button>
        ) : (
          <button
            className="jp-Button jp-mod-accept jp-mod-styled"
            data-testid="hermes-send"
            disabled={!text.trim() || sending}
            onClick={() => void send()}
          >
            Send
          </button>
        )}
      </div>
    </div>
  );
}
