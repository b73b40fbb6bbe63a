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

type Status = { text: string; ok: boolean } | null;
type Busy = '' | 'testing' | 'saving';

/** What the form holds: the server's settings, what the user typed, and the last answer. */
interface ISettingsState {
  view: IModelSettings | null;
  backend: string;
  url: string;
  model: string;
  key: string;
  local: ILocalServer[] | null;
  check: IConnectionCheck | null;
  status: Status;
  busy: Busy;
  show: (settings: IModelSettings) => void;
  setBackend: (value: string) => void;
  setUrl: (value: string) => void;
  setModel: (value: string) => void;
  setKey: (value: string) => void;
  setCheck: (value: IConnectionCheck | null) => void;
  setStatus: (value: Status) => void;
  setBusy: (value: Busy) => void;
}

/** The form's state, loaded once from the server with the local model servers beside it. */
function useSettingsState(api: IModelSettingsApi): ISettingsState {
  const [view, setView] = useState<IModelSettings | null>(null);
  const [backend, setBackend] = useState('');
  const [url, setUrl] = useState('');
  const [model, setModel] = useState('');
  const [key, setKey] = useState('');
  const [local, setLocal] = useState<ILocalServer[] | null>(null);
  const [check, setCheck] = useState<IConnectionCheck | null>(null);
  const [status, setStatus] = useState<Status>(null);
  const [busy, setBusy] = useState<Busy>('');

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

  return {
    view, backend, url, model, key, local, check, status, busy,
    show, setBackend, setUrl, setModel, setKey, setCheck, setStatus, setBusy
  };
}

/** The change a save sends: only fields not locked, and the address, model and key only for openai. */
function settingsChange(state: ISettingsState, locked: (name: SettingName) => boolean): ModelSettingsChange {
  const change: ModelSettingsChange = {};
  const put = (name: SettingName, value: string): void => {
    if (!locked(name)) {
      change[name] = value;
    }
  };
  put('backend', state.backend);
  if (state.backend === 'openai') {
    put('url', state.url);
    put('model', state.model);
    if (state.key) {
      put('key', state.key);
    }
  }
  return change;
}

/** The sentence after a save: which backend and model the next answer comes from. */
function savedSentence(saved: IModelSettings): string {
  const what = saved.backend === 'openai' ? `${saved.model || 'the server\u2019s first model'} at ${saved.url}` : BACKEND_LABELS[saved.backend] ?? saved.backend;
  return `Saved. The next answer comes from ${what}.`;
}

/** Run one server call with the busy flag up and its failure shown as the status line. */
async function whileBusy(state: ISettingsState, busy: Busy, work: () => Promise<void>): Promise<void> {
  state.setBusy(busy);
  state.setStatus(null);
  try {
    await work();
  } catch (error) {
    state.setStatus({ text: errorText(error), ok: false });
  } finally {
    state.setBusy('');
  }
}

export function ModelSettingsForm(props: IModelSettingsProps): JSX.Element {
  const { api } = props;
  const state = useSettingsState(api);
  const { view, status, busy } = state;
  if (!view) {
    return (
      <div className="jp-HermesModelSettings" data-testid="hermes-model-settings" data-state="loading">
        <p role="status">{status?.text ?? 'Loading the model settings…'}</p>
      </div>
    );
  }
  const locked = (name: SettingName): boolean => view.locked.includes(name);
  const openai = state.backend === 'openai';

  const test = (): Promise<void> =>
    whileBusy(state, 'testing', async () => {
      const { url, model, key } = state;
      const answer = await api.test({ url, model, ...(key ? { key } : {}) });
      state.setCheck(answer);
      state.setStatus({ text: answer.message, ok: answer.ok });
    });

  const save = async (event: React.FormEvent): Promise<void> => {
    event.preventDefault();
    const change = settingsChange(state, locked);
    await whileBusy(state, 'saving', async () => {
      const saved = await api.save(change);
      state.show(saved);
      state.setKey('');
      await props.onSaved?.(saved);
      state.setStatus({ text: savedSentence(saved), ok: true });
    });
  };

  return (
    <form
      className="jp-HermesModelSettings"
      data-testid="hermes-model-settings"
      data-state={busy || 'ready'}
      onSubmit={event => void save(event)}
    >
      <BackendField backends={view.backends} value={state.backend} locked={locked('backend')} onChange={state.setBackend} />
      {openai && <OpenAIFields state={state} view={view} locked={locked} />}
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
      <StatusLine status={status} />
    </form>
  );
}

function BackendField(props: { backends: string[]; value: string; locked: boolean; onChange: (value: string) => void }): JSX.Element {
  return (
    <Field label="Kind of agent" locked={props.locked}>
      <select
        data-testid="hermes-settings-backend"
        value={props.value}
        disabled={props.locked}
        onChange={event => props.onChange(event.target.value)}
      >
        {props.backends.map(name => (
          <option key={name} value={name}>
            {BACKEND_LABELS[name] ?? name}
          </option>
        ))}
      </select>
    </Field>
  );
}

/** Address, key, model and the local servers: the fields only an OpenAI-compatible server needs. */
function OpenAIFields(props: { state: ISettingsState; view: IModelSettings; locked: (name: SettingName) => boolean }): JSX.Element {
  const { state, view, locked } = props;
  const { check, local, url } = state;
  const models = check?.models.length ? check.models : local?.find(s => s.url === url)?.models ?? [];
  const useServer = (server: ILocalServer): void => {
    state.setUrl(server.url);
    state.setModel(server.models[0] ?? '');
    state.setKey('');
    state.setCheck(null);
    state.setStatus(null);
  };
  return (
    <>
      <Field label="Address" locked={locked('url')}>
        <input
          type="url"
          data-testid="hermes-settings-url"
          value={url}
          placeholder="http://127.0.0.1:8080/v1"
          disabled={locked('url')}
          onChange={event => state.setUrl(event.target.value)}
        />
      </Field>
      <Field label="Key" locked={locked('key')}>
        <input
          type="password"
          autoComplete="new-password"
          data-testid="hermes-settings-key"
          value={state.key}
          placeholder={view.key_set ? `Saved${view.key_hint ? ` (${view.key_hint})` : ''}; empty keeps it` : 'None (a local server needs none)'}
          disabled={locked('key')}
          onChange={event => state.setKey(event.target.value)}
        />
      </Field>
      <ModelField value={state.model} models={models} locked={locked('model')} onChange={state.setModel} />
      <LocalServers servers={local} disabled={locked('url')} onUse={useServer} />
    </>
  );
}

function ModelField(props: { value: string; models: string[]; locked: boolean; onChange: (value: string) => void }): JSX.Element {
  return (
    <Field label="Model" locked={props.locked}>
      <input
        data-testid="hermes-settings-model"
        list="jp-HermesModelSettings-models"
        value={props.value}
        placeholder="empty: the first model the server lists"
        disabled={props.locked}
        onChange={event => props.onChange(event.target.value)}
      />
      <datalist id="jp-HermesModelSettings-models">
        {props.models.map(id => (
          <option key={id} value={id} />
        ))}
      </datalist>
    </Field>
  );
}

function StatusLine(props: { status: Status }): JSX.Element {
  const { status } = props;
  return (
    <p
      role="status"
      aria-live="polite"
      data-testid="hermes-settings-status"
      data-ok={status ? String(status.ok) : undefined}
      className={`jp-HermesModelSettings-status${status && !status.ok ? ' jp-mod-error' : ''}`}
    >
      {status?.text ?? ''}
    </p>
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
