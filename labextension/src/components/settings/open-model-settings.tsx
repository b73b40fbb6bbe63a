/**
 * "Model settings…" from the composer's picker: the settings form in a dialog.
 * A save also switches the open session to the saved backend and model, so
 * its next answer comes from there (docs/models.md).
 */
import { Dialog, ReactWidget, showDialog } from '@jupyterlab/apputils';
import React from 'react';

import {
  findLocalServers,
  getModelSettings,
  saveModelSettings,
  switchSession,
  testConnection
} from '../../api/settings';
import type { IChatModel } from '../../model/chat-model';
import { IModelSettingsApi, ModelSettingsForm } from './model-settings';

export async function openModelSettings(chat: IChatModel): Promise<void> {
  const client = chat.client;
  const api: IModelSettingsApi = {
    get: () => getModelSettings(client),
    save: change => saveModelSettings(client, change),
    test: what => testConnection(client, what),
    local: () => findLocalServers(client)
  };
  const body = ReactWidget.create(
    <ModelSettingsForm
      api={api}
      onSaved={async saved => {
        const sid = chat.sessionId;
        if (sid) {
          await switchSession(client, sid, saved.backend, saved.backend === 'openai' ? saved.model || null : null);
        }
        await chat.modelsChanged();
      }}
    />
  );
  await showDialog({
    title: 'Model settings',
    body,
    buttons: [Dialog.cancelButton({ label: 'Close' })]
  });
}
