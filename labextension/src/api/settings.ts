/**
 * The model settings routes (docs/models.md): read, save, test a connection,
 * find local model servers. The key is sent, never received: the server
 * answers `key_set` and at most a 4-character hint.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { API_ROOT, HermesApiError } from './client';

export type SettingName = 'backend' | 'url' | 'model' | 'key';

export interface IModelSettings {
  backend: string;
  url: string;
  model: string;
  key_set: boolean;
  key_hint: string | null;
  key_saved: boolean;
  /** Fields the administrator set: shown, never editable here. */
  locked: SettingName[];
  /** The kinds of agent this server allows. */
  backends: string[];
}

/** What may be saved: a missing field is left as it is, null or '' clears it back to the preset. */
export type ModelSettingsChange = Partial<Record<SettingName, string | null>>;

export interface IConnectionCheck {
  ok: boolean;
  kind: 'ok' | 'wrong_key' | 'unreachable' | 'unknown_model' | 'not_openai' | 'error';
  /** A plain sentence for the person. */
  message: string;
  models: string[];
  detail: string | null;
}

export interface ILocalServer {
  name: string;
  url: string;
  models: string[];
}

async function call<T>(settings: ServerConnection.ISettings, method: string, path: string[], body?: unknown): Promise<T> {
  const url = URLExt.join(settings.baseUrl, API_ROOT, ...path);
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { 'Content-Type': 'application/json' };
  }
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch {
    throw new HermesApiError('The Jupyter server cannot be reached. Check that it is running.', 0);
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const message = data && typeof data.message === 'string' ? data.message : `The request failed (${response.status}).`;
    throw new HermesApiError(message, response.status);
  }
  return data as T;
}

export function getModelSettings(settings: ServerConnection.ISettings): Promise<IModelSettings> {
  return call(settings, 'GET', ['settings']);
}

export function saveModelSettings(
  settings: ServerConnection.ISettings,
  change: ModelSettingsChange
): Promise<IModelSettings> {
  return call(settings, 'PUT', ['settings'], change);
}

/** Test `url`, `key` and `model` (each left out: the saved one). */
export function testConnection(
  settings: ServerConnection.ISettings,
  what: { url?: string; key?: string; model?: string }
): Promise<IConnectionCheck> {
  return call(settings, 'POST', ['settings', 'test'], what);
}

export async function findLocalServers(settings: ServerConnection.ISettings): Promise<ILocalServer[]> {
  const found = await call<{ servers: ILocalServer[] }>(settings, 'GET', ['settings', 'local']);
  return found.servers ?? [];
}

/** Switch a session to `backend` (and `model`, else the backend's default) from its next turn. */
export function switchSession(
  settings: ServerConnection.ISettings,
  sid: string,
  backend: string,
  model: string | null
): Promise<unknown> {
  return call(settings, 'PATCH', ['sessions', encodeURIComponent(sid)], { backend, model });
}
