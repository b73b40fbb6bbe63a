/**
 * Inline completion in notebook code cells from the OpenAI-compatible model of Model settings
 * (docs/editor.md), through JupyterLab's inline completer: ghost text after a pause in typing,
 * Tab accepts it. Off until the person turns on "Inline completions from Hermes" (this plugin's
 * setting); the server masks secrets in the code before it goes to the model.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import {
  CompletionHandler,
  ICompletionProviderManager,
  IInlineCompletionContext,
  IInlineCompletionList,
  IInlineCompletionProvider
} from '@jupyterlab/completer';
import { URLExt } from '@jupyterlab/coreutils';
import { NotebookPanel } from '@jupyterlab/notebook';
import { ServerConnection } from '@jupyterlab/services';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { API_ROOT } from '../api/client';
import { LatestRequest, aroundCursor } from '../model/inline-requests';

const PLUGIN_ID = 'hermes-jupyter:inline-completion';
const DEFAULT_PAUSE_MS = 300;

export const inlineCompletionPlugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'Inline completions in notebook code cells from the model chosen in Hermes model settings.',
  autoStart: true,
  requires: [ICompletionProviderManager, ISettingRegistry],
  activate: (app: JupyterFrontEnd, completion: ICompletionProviderManager, registry: ISettingRegistry) => {
    const provider = new HermesInlineProvider(app.serviceManager.serverSettings);
    completion.registerInlineProvider(provider);
    void registry.load(PLUGIN_ID).then(settings => {
      const apply = () => {
        provider.enabled = settings.get('enabled').composite === true;
        const pause = settings.get('pauseMs').composite;
        provider.pauseMs = typeof pause === 'number' ? pause : DEFAULT_PAUSE_MS;
      };
      apply();
      settings.changed.connect(apply);
    });
  }
};

export class HermesInlineProvider implements IInlineCompletionProvider {
  readonly name = 'Hermes';
  readonly identifier = 'hermes-jupyter';
  /** JupyterLab's own settings for the provider: on (our setting is the switch), no pause of its own (ours). */
  readonly schema = { type: 'object' as const, default: { enabled: true, debouncerDelay: 0, timeout: 10000 } };

  constructor(private _server: ServerConnection.ISettings) {}

  enabled = false;

  get pauseMs(): number {
    return this._latest.delayMs;
  }

  set pauseMs(ms: number) {
    this._latest.delayMs = Math.max(0, ms);
  }

  async fetch(request: CompletionHandler.IRequest, context: IInlineCompletionContext): Promise<IInlineCompletionList> {
    const panel = context.widget instanceof NotebookPanel ? context.widget : null;
    const cell = panel?.content.activeCell;
    const around = aroundCursor(request.text, request.offset);
    if (!this.enabled || !panel || !cell || cell.model.type !== 'code' || !around) {
      this._latest.cancel();
      return { items: [] };
    }
    const body = { path: panel.context.path, cell_id: cell.model.id, ...around, language: languageOf(panel) };
    try {
      const text = await this._latest.run(signal => this._complete(body, signal));
      return { items: text ? [{ insertText: text }] : [] };
    } catch (error) {
      this._warnOnce(error instanceof Error ? error.message : String(error));
      return { items: [] };
    }
  }

  private async _complete(body: object, signal: AbortSignal): Promise<string> {
    const url = URLExt.join(this._server.baseUrl, API_ROOT, 'complete');
    const init: RequestInit = { method: 'POST', body: JSON.stringify(body), signal,
      headers: { 'Content-Type': 'application/json' } };
    const response = await ServerConnection.makeRequest(url, init, this._server);
    const data = (await response.json().catch(() => ({}))) as { text?: unknown; message?: unknown };
    if (!response.ok) {
      throw new Error(typeof data.message === 'string' ? data.message : `HTTP ${response.status}`);
    }
    return typeof data.text === 'string' ? data.text : '';
  }

  /** A refusal is said once in the console, not at every key (the ghost text simply does not come). */
  private _warnOnce(message: string): void {
    if (message !== this._warned) {
      this._warned = message;
      console.warn(`Hermes inline completion: ${message}`);
    }
  }

  private _latest = new LatestRequest(DEFAULT_PAUSE_MS);
  private _warned = '';
}

/** The notebook's language as its kernel reported it (python when it has not). */
function languageOf(panel: NotebookPanel): string {
  const info = panel.content.model?.getMetadata('language_info') as { name?: string } | undefined;
  return info?.name || 'python';
}
