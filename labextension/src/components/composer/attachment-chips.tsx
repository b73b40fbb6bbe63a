/**
 * The composer's attachments: one chip per attached item (removable), and the
 * buttons that attach the active cell, the selection, a file or a variable.
 */
import React from 'react';

import type { AttachmentKind } from '../../api/contract';
import { AttachmentsModel, attachmentTitle } from '../../model/attachments';
import { useSignal } from '../use-signal';

const KINDS: { kind: AttachmentKind; label: string; title: string }[] = [
  { kind: 'cell', label: 'Cell', title: 'Attach the active notebook cell (its source)' },
  { kind: 'selection', label: 'Selection', title: 'Attach the text selected in the active cell' },
  { kind: 'file', label: 'File', title: 'Attach a text file from the server' },
  { kind: 'variable', label: 'Variable', title: "Attach a kernel variable's description" }
];

export function AttachmentChips(props: { model: AttachmentsModel; disabled?: boolean }): JSX.Element | null {
  const { model, disabled } = props;
  useSignal(model.changed);
  const sources = model.sources;
  if (!sources && model.items.length === 0) {
    return null;
  }
  const available = new Set(sources?.available() ?? []);
  return (
    <div className="jp-HermesAttach" data-testid="hermes-attach">
      {model.items.length > 0 && (
        <ul className="jp-HermesAttach-chips" aria-label="Attached to the next message">
          {model.items.map((item, index) => (
            <li
              key={`${index}:${item.kind}:${item.label}`}
              className="jp-HermesAttach-chip"
              data-testid="hermes-attachment-chip"
              data-kind={item.kind}
              title={item.text.slice(0, 400)}
            >
              <span className="jp-HermesAttach-kind">{item.kind}</span>
              <span className="jp-HermesAttach-label">{item.label}</span>
              <button
                className="jp-HermesIconButton"
                data-testid="hermes-attachment-remove"
                aria-label={`Remove ${attachmentTitle(item)}`}
                title="Remove"
                onClick={() => model.remove(index)}
              >
                ✕
              </button>
            </li>
          ))}
        </ul>
      )}
      {sources && (
        <div className="jp-HermesAttach-add" role="group" aria-label="Attach context">
          <span className="jp-HermesAttach-prompt">Attach:</span>
          {KINDS.map(({ kind, label, title }) => (
            <button
              key={kind}
              className="jp-Button jp-mod-minimal jp-mod-styled jp-HermesAttach-button"
              data-testid={`hermes-attach-${kind}`}
              title={title}
              disabled={disabled || !available.has(kind)}
              onClick={() => void model.pick(kind)}
            >
              {label}
            </button>
          ))}
        </div>
      )}
      {model.problem && (
        <div className="jp-HermesAttach-problem" role="status" data-testid="hermes-attach-problem">
          {model.problem}
        </div>
      )}
    </div>
  );
}
