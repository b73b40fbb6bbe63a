/**
 * The model picker of the open session: the models its backend offers
 * (`GET models`); choosing one switches the session for its next turns, and the
 * server remembers it. Hidden while the backend offers nothing to choose;
 * "Model settings…" beside it opens the settings dialog (docs/models.md).
 */
import React from 'react';

import { IModelList } from '../../api/contract';

export interface IModelPickerProps {
  models: IModelList | null;
  /** The model the next turn uses (the session's, else the backend's default). */
  value: string | null;
  onChange: (model: string) => void;
  /** Open the model settings (backend, address, key, model; docs/models.md). */
  onOpenSettings?: () => void;
}

export function ModelPicker(props: IModelPickerProps): JSX.Element | null {
  const { models, value } = props;
  const options = models?.models ?? [];
  const settings = props.onOpenSettings && (
    <button
      type="button"
      className="jp-HermesModelPicker-settings jp-mod-minimal jp-Button"
      data-testid="hermes-model-settings-open"
      title="Model settings…: the kind of agent, the server's address, its key and the model"
      onClick={props.onOpenSettings}
    >
      Model settings…
    </button>
  );
  if (options.length === 0) {
    return settings || null;
  }
  // A model the session names but the backend no longer lists stays choosable as it is.
  const listed = options.some(m => m.id === value) || !value ? options : [{ id: value, label: value }, ...options];
  return (
    <>
      <select
        className="jp-HermesModelPicker"
        data-testid="hermes-model-picker"
        aria-label="Model for the next answers"
        title="Model for the next answers in this session"
        value={value ?? ''}
        onChange={event => props.onChange(event.target.value)}
      >
        {listed.map(m => (
          <option key={m.id} value={m.id}>
            {m.label}
          </option>
        ))}
      </select>
      {settings}
    </>
  );
}
