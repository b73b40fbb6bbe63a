/**
 * The model settings form (docs/models.md): kind of agent, address, key, model;
 * Test connection answers in the server's plain words; local model servers found
 * on their usual ports can be picked. The key field is a password field that is
 * never filled from the server: empty keeps the saved key.
 */
import React, { useEffect, useState } from 'react';

import {
  IConnectionCheck,
  ILocalServer,
  IModelSettings,
  ModelSettingsChange,
  SettingName
} from '../../api/settings';

/** What the form calls on the server (api/settings.ts, through the one client). */
export interface IModelSettingsApi {
  get(): Promise<IModelSettings>;
  save(change: ModelSettingsChange): Promise<IModelSettings>;
  test(what: { url?: string; key?: string; model?: string }): Promise<IConnectionCheck>;
  local(): Promise<ILocalServer[]>;
}

export interface IModelSettingsProps {
  api: IModelSettingsApi;
  /** After a save: the backend and model the next answers use. */
  onSaved?: (saved: IModelSettings) => Promise<void> | void;
}

const BACKEND_LABELS: { [name: string]: string } = {
  demo: 'Demo (offline, no model)',
  openai: 'OpenAI-compatible server',
  hermes: 'Hermes Agent'
};

const LOCKED = 'Set by your administrator';

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : 'Something went wrong. Try again.';
}

export function ModelSettingsForm(props: IModelSettingsProps): JSX.Element {
  const { api } = props;
  const [view, setView] = useState<IModelSettings | null>(null);
  const [backend, setBackend] = useState('');
  const [url, setUrl] = useState('');
  const [model, setModel] = useState('');
  const [key, setKey] = useState('');
  const [local, setLocal] = useState<ILocalServer[] | null>(null);
  const [check, setCheck] = useState<IConnectionCheck | null>(null);
  const [status, setStatus] = useState<{ text: string; ok: boolean } | null>(null);
  const [busy, setBusy] = useState<'' | 'testing' | 'saving'>('');

  const show = (settings: IModelSettings): void => {
    setView(settings);
    setBackend(settings.backend);
    setUrl(settings.url);
    setModel(settings.model);
  };

  useEffect(() => {
    api.get().then(show, error => setStatus({ text: errorText(error), ok: false }));
    api.local().then(setLocal, () => setLocal([]));
  }, [api]);

  if (!view) {
    return (
      <div className="jp-HermesModelSettings" data-testid="hermes-model-settings" data-state="loading">
        <p role="status">{status?.text ?? 'Loading the model settings…'}</p>
      </div>
    );
  }
  const locked = (name: SettingName): boolean => view.locked.includes(name);
  const openai = backend === 'openai';
  const models = check?.models.length ? check.models : local?.find(s => s.url === url)?.models ?? [];

  const test = async (): Promise<void> => {
    setBusy('testing');
    setStatus(null);
    try {
      const answer = await api.test({ url, model, ...(key ? { key } : {}) });
      setCheck(answer);
      setStatus({ text: answer.message, ok: answer.ok });
    } catch (error) {
      setStatus({ text: errorText(error), ok: false });
    } finally {
      setBusy('');
    }
  };

  const save = async (event: React.FormEvent): Promise<void> => {
    event.preventDefault();
    const change: ModelSettingsChange = {};
    const put = (name: SettingName, value: string): void => {
      if (!locked(name)) {
        change[name] = value;
      }
    };
    put('backend', backend);
    if (openai) {
      put('url', url);
      put('model', model);
      if (key) {
        put('key', key);
      }
    }
    setBusy('saving');
    setStatus(null);
    try {
      const saved = await api.save(change);
      show(saved);
      setKey('');
      await props.onSaved?.(saved);
      const what = saved.backend === 'openai' ? `${saved.model || 'the server\u2019s first model'} at ${saved.url}` : BACKEND_LABELS[saved.backend] ?? saved.backend;
      setStatus({ text: `Saved. The next answer comes from ${what}.`, ok: true });
    } catch (error) {
      setStatus({ text: errorText(error), ok: false });
    } finally {
      setBusy('');
    }
  };

  const useServer = (server: ILocalServer): void => {
    setUrl(server.url);
    setModel(server.models[0] ?? '');
    setKey('');
    setCheck(null);
    setStatus(null);
  };

  return (
    <form
      className="jp-HermesModelSettings"
      data-testid="hermes-model-settings"
      data-state={busy || 'ready'}
      onSubmit={event => void save(event)}
    >
      <Field label="Kind of agent" locked={locked('backend')}>
        <select
          data-testid="hermes-settings-backend"
          value={backend}
          disabled={locked('backend')}
          onChange={event => setBackend(event.target.value)}
        >
          {view.backends.map(name => (
            <option key={name} value={name}>
              {BACKEND_LABELS[name] ?? name}
            </option>
          ))}
        </select>
      </Field>
      {openai && (
        <>
          <Field label="Address" locked={locked('url')}>
            <input
              type="url"
              data-testid="hermes-settings-url"
              value={url}
              placeholder="http://127.0.0.1:8080/v1"
              disabled={locked('url')}
              onChange={event => setUrl(event.target.value)}
            />
          </Field>
          <Field label="Key" locked={locked('key')}>
            <input
              type="password"
              autoComplete="new-password"
              data-testid="hermes-settings-key"
              value={key}
              placeholder={view.key_set ? `Saved${view.key_hint ? ` (${view.key_hint})` : ''}; empty keeps it` : 'None (a local server needs none)'}
              disabled={locked('key')}
              onChange={event => setKey(event.target.value)}
            />
          </Field>
          <Field label="Model" locked={locked('model')}>
            <input
              data-testid="hermes-settings-model"
              list="jp-HermesModelSettings-models"
              value={model}
              placeholder="empty: the first model the server lists"
              disabled={locked('model')}
              onChange={event => setModel(event.target.value)}
            />
            <datalist id="jp-HermesModelSettings-models">
              {models.map(id => (
                <option key={id} value={id} />
              ))}
            </datalist>
          </Field>
          <LocalServers servers={local} disabled={locked('url')} onUse={useServer} />
        </>
      )}
      <div className="jp-HermesModelSettings-actions">
        {openai && (
          <button type="button" className="jp-mod-styled" data-testid="hermes-settings-test" disabled={busy !== ''} onClick={() => void test()}>
            {busy === 'testing' ? 'Testing…' : 'Test connection'}
          </button>
        )}
        <button type="submit" className="jp-mod-styled jp-mod-accept" data-testid="hermes-settings-save" disabled={busy !== ''}>
          {busy === 'saving' ? 'Saving…' : 'Save'}
        </button>
      </div>
      <p
        role="status"
        aria-live="polite"
        data-testid="hermes-settings-status"
        data-ok={status ? String(status.ok) : undefined}
        className={`jp-HermesModelSettings-status${status && !status.ok ? ' jp-mod-error' : ''}`}
      >
        {status?.text ?? ''}
      </p>
    </form>
  );
}

function Field(props: { label: string; locked: boolean; children: React.ReactNode }): JSX.Element {
  return (
    <label className="jp-HermesModelSettings-field">
      <span className="jp-HermesModelSettings-label">{props.label}</span>
      {props.children}
      {props.locked && <span className="jp-HermesModelSettings-locked">{LOCKED}</span>}
    </label>
  );
}

function LocalServers(props: {
  servers: ILocalServer[] | null;
  disabled: boolean;
  onUse: (server: ILocalServer) => void;
}): JSX.Element | null {
  const { servers } = props;
  if (servers === null || props.disabled) {
    return null;
  }
  if (servers.length === 0) {
    return <p className="jp-HermesModelSettings-note">No model server runs on this machine's usual ports (Ollama, llama.cpp, vLLM, LM Studio).</p>;
  }
  return (
    <div className="jp-HermesModelSettings-local" data-testid="hermes-settings-local">
      <span className="jp-HermesModelSettings-label">Found on this machine</span>
      <ul>
        {servers.map(server => (
          <li key={server.url}>
            <button type="button" className="jp-mod-styled" onClick={() => props.onUse(server)}>
              Use
            </button>{' '}
            {server.name} at {server.url}
            {server.models.length ? ` (${server.models.slice(0, 3).join(', ')}${server.models.length > 3 ? ', …' : ''})` : ''}
          </li>
        ))}
      </ul>
    </div>
  );
}
