/**
 * The model settings routes (docs/models.md): read, save, test a connection,
 * find local model servers. The key is sent, never received: the server
 * answers `key_set` and at most a 4-character hint.
 */
import type { HermesClient } from './client';

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

export function getModelSettings(client: HermesClient): Promise<IModelSettings> {
  return client.call('GET', ['settings']);
}

export function saveModelSettings(
  client: HermesClient,
  change: ModelSettingsChange
): Promise<IModelSettings> {
  return client.call('PUT', ['settings'], change);
}

/** Test `url`, `key` and `model` (each left out: the saved one). */
export function testConnection(
  client: HermesClient,
  what: { url?: string; key?: string; model?: string }
): Promise<IConnectionCheck> {
  return client.call('POST', ['settings', 'test'], what);
}

export async function findLocalServers(client: HermesClient): Promise<ILocalServer[]> {
  const found = await client.call<{ servers: ILocalServer[] }>('GET', ['settings', 'local']);
  return found.servers ?? [];
}

/** Switch a session to `backend` (and `model`, else the backend's default) from its next turn. */
export function switchSession(
  client: HermesClient,
  sid: string,
  backend: string,
  model: string | null
): Promise<unknown> {
  return client.call('PATCH', ['sessions', sid], { backend, model });
}
