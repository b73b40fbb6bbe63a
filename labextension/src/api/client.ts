/**
 * The only HTTP client of the hermes API (docs/api.md).
 *
 * Every request goes through `ServerConnection.makeRequest` with URLs built from
 * `settings.baseUrl`, so tokens, XSRF and JupyterHub prefixes just work. Every
 * failure surfaces as one `HermesApiError` carrying the server's `{message}`.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import {
  IAttachment,
  ICreateSession,
  IRunContinued,
  IRunEventsPage,
  IRunInfo,
  IAllowedAlways,
  IModelList,
  IRunStarted,
  ISession,
  ISessionSummary,
  MimeBundle,
  SendMode
} from './contract';
import type { IProposalRow } from './rows';

/** The API root below the server's base URL. */
export const API_ROOT = 'hermes/api';

/** A failed hermes request: `status` is 0 for a network failure. */
export class HermesApiError extends Error {
  /**
   * `plain`: the message is the server's own sentence for a person (its JSON `message`), not a
   * status line; `detail`: the server's technical reason, for a details fold.
   */
  constructor(
    message: string,
    readonly status: number,
    readonly plain = false,
    readonly detail = ''
  ) {
    super(message);
    this.name = 'HermesApiError';
  }

  get isNotFound(): boolean {
    return this.status === 404;
  }

  get isConflict(): boolean {
    return this.status === 409;
  }
}

/** One page of `GET sessions?limit=N&before=CURSOR`. */
export interface ISessionPage {
  sessions: ISessionSummary[];
  /** The cursor of the next (older) page, or null when this page is the last. */
  next: string | null;
}

/** Either answer shape of `GET sessions` as a page: a plain list is the whole listing. */
export function readSessionPage(body: unknown): ISessionPage {
  if (Array.isArray(body)) {
    return { sessions: body as ISessionSummary[], next: null };
  }
  if (body !== null && typeof body === 'object') {
    const { sessions, next } = body as { sessions?: unknown; next?: unknown };
    return {
      sessions: Array.isArray(sessions) ? (sessions as ISessionSummary[]) : [],
      next: typeof next === 'string' && next !== '' ? next : null
    };
  }
  return { sessions: [], next: null };
}

/** Rows asked per page of a run's journal. */
const EVENTS_PAGE_LIMIT = 1000;

/** A failure that says the server is gone or broken, not that one request was wrong. */
function serverDown(status: number): boolean {
  return status === 0 || status >= 500;
}

/** A row of `GET notebooks/variables`: what the picker shows (no values). */
export interface IVariableRow {
  name: string;
  type: string;
  /** "4 × 3", "12 items", "23 characters"; absent for a scalar. */
  size?: string;
}

export interface IVariableListing {
  variables: IVariableRow[];
  /** Variables past the listing's limit. */
  more: number;
}

/** `GET notebooks/variables/{name}`: the summary and the attachment's `text`. */
export interface IVariableSummary extends IVariableRow {
  summary: Record<string, unknown>;
  text: string;
}

export class HermesClient {
  constructor(readonly serverSettings: ServerConnection.ISettings) {}

  /**
   * Emitted when a request succeeds after requests failed because the server could not be
   * reached (or answered 5xx): the server is back, so pollers that backed off look again now.
   */
  get reconnected(): ISignal<this, void> {
    return this._reconnected;
  }

  listSessions(): Promise<ISessionSummary[]> {
    return this.request<unknown>('GET', ['sessions']).then(
      body => readSessionPage(body).sessions
    );
  }

  /**
   * One page of the listing, newest first: `before` is the `next` cursor of
   * the page before, null for the first. Read the answer with `readSessionPage`
   * (a server without pages answers the whole list).
   */
  listSessionsPage(limit: number, before: string | null): Promise<unknown> {
    const cursor = before === null ? '' : `&before=${encodeURIComponent(before)}`;
    return this.request('GET', ['sessions'], undefined, `?limit=${limit}${cursor}`);
  }

  createSession(body: ICreateSession = {}): Promise<ISession & { run_id?: string }> {
    return this.request<ISession | { session: ISession }>(
      'POST',
      ['sessions'],
      body
    ).then(unwrapSession);
  }

  getSession(sid: string): Promise<ISession> {
    return this.request<ISession | { session: ISession }>('GET', [
      'sessions',
      sid
    ]).then(unwrapSession);
  }

  renameSession(sid: string, title: string): Promise<unknown> {
    return this.request('PATCH', ['sessions', sid], { title });
  }

  /** The variables of a notebook's kernel: name, type, size (the variable picker; docs/attachments.md). */
  listVariables(notebookPath: string): Promise<IVariableListing> {
    return this.request('GET', ['notebooks', 'variables'], undefined, `?path=${encodeURIComponent(notebookPath)}`);
  }

  /** One variable as data (shape, dtypes, head…), with the text an attachment carries, secrets masked. */
  describeVariable(notebookPath: string, name: string): Promise<IVariableSummary> {
    return this.request(
      'GET',
      ['notebooks', 'variables', name],
      undefined,
      `?path=${encodeURIComponent(notebookPath)}`
    );
  }

  /** Bind a session to a notebook and its kernel (nulls unbind); answers the session's listing row. */
  bindSession(sid: string, notebookPath: string | null, kernelId: string | null): Promise<ISessionSummary> {
    return this.request('PATCH', ['sessions', sid], { notebook_path: notebookPath, kernel_id: kernelId });
  }

  deleteSession(sid: string): Promise<unknown> {
    return this.request('DELETE', ['sessions', sid]);
  }

  /** Start a turn; while one runs it is queued, or with `steer` handed to the running turn. */
  startRun(sid: string, message: string, mode: SendMode = 'queue', attachments: IAttachment[] = []): Promise<IRunStarted> {
    const body: { message: string; mode?: SendMode; attachments?: IAttachment[] } = { message };
    if (mode === 'steer') {
      body.mode = mode;
    }
    if (attachments.length) {
      body.attachments = attachments;
    }
    return this.request('POST', ['sessions', sid, 'runs'], body);
  }

  /** Change the session's model (or other fields) for its next turns. */
  editSession(sid: string, changes: { model?: string | null }): Promise<ISession> {
    return this.request('PATCH', ['sessions', sid], changes);
  }

  listModels(backend?: string): Promise<IModelList> {
    const query = backend ? `?backend=${encodeURIComponent(backend)}` : '';
    return this.request('GET', ['models'], undefined, query);
  }

  /** What "allow always" answers allow; `unavailable` names backends that could not be asked now. */
  allowedAlways(): Promise<{ always: IAllowedAlways[]; unavailable?: string[] }> {
    return this.request('GET', ['approvals', 'always']);
  }

  revokeAlways(item: IAllowedAlways): Promise<{ always: IAllowedAlways[] }> {
    const query = `?backend=${encodeURIComponent(item.backend)}&pattern=${encodeURIComponent(item.pattern)}`;
    return this.request('DELETE', ['approvals', 'always'], undefined, query);
  }

  /** Rerun the last user turn; the body may name the new run. */
  retry(sid: string): Promise<Partial<IRunStarted> | null> {
    return this.request('POST', ['sessions', sid, 'retry'], {});
  }

  /** Continue the session's last interrupted or stopped answer (409 when it finished normally). */
  continueSession(sid: string): Promise<IRunContinued> {
    return this.request('POST', ['sessions', sid, 'continue'], {});
  }

  undo(sid: string): Promise<unknown> {
    return this.request('POST', ['sessions', sid, 'undo'], {});
  }

  getRun(runId: string): Promise<IRunInfo> {
    return this.request('GET', ['runs', runId]);
  }

  /** The run's notebook output bundle, rendered by the server (the one writer of cell outputs). */
  getRunBundle(runId: string): Promise<MimeBundle> {
    return this.request('GET', ['runs', runId, 'bundle']);
  }

  /**
   * Ask the server to rebuild a notebook's unfinished hermes outputs. With a collaboration room
   * open it writes through the room's shared document (`shared: true`), once per run.
   */
  recoverNotebook(path: string): Promise<{ cells_recovered: number; shared?: boolean }> {
    return this.request('POST', ['notebooks', 'recover'], { path });
  }

  cancelRun(runId: string): Promise<unknown> {
    return this.request('POST', ['runs', runId, 'cancel'], {});
  }

  /** Answer a pending approval with one of the choices it offers. */
  answerApproval(runId: string, approvalId: string, choice: string): Promise<unknown> {
    return this.request('POST', ['runs', runId, 'approvals', approvalId], { choice });
  }

  /** Answer a clarifying question (a choice, or the user's own words). */
  answerClarify(runId: string, clarifyId: string, answer: string): Promise<unknown> {
    return this.request('POST', ['runs', runId, 'clarify', clarifyId], { answer });
  }

  /** Record the user's decision on a proposed cell; the proposal row as the server now has it. */
  decideProposal(runId: string, proposalId: string, decision: 'accepted' | 'rejected'): Promise<IProposalRow> {
    return this.request('POST', ['runs', runId, 'proposals', proposalId], { decision });
  }

  getRunEvents(
    runId: string,
    afterSeq: number,
    limit = EVENTS_PAGE_LIMIT
  ): Promise<IRunEventsPage> {
    const query = `?after_seq=${afterSeq}&limit=${limit}`;
    return this.request('GET', ['runs', runId, 'events'], undefined, query);
  }

  /**
   * The WebSocket URL of a run stream resuming after `afterSeq`; with `snapshot`, the run so far comes
   * as one snapshot message (or, for an ended run, its settled message alone) instead of its rows.
   */
  streamUrl(runId: string, afterSeq: number, snapshot = false): string {
    const settings = this.serverSettings;
    let url =
      URLExt.join(
        settings.wsUrl,
        API_ROOT,
        'runs',
        encodeURIComponent(runId),
        'stream'
      ) + `?after_seq=${afterSeq}${snapshot ? '&snapshot=1' : ''}`;
    if (settings.appendToken && settings.token) {
      url += `&token=${encodeURIComponent(settings.token)}`;
    }
    return url;
  }

  /**
   * A request to a hermes route for the route modules beside this one (api/settings.ts): the same
   * URL building, credentials, plain errors and reconnect signal as every other request.
   */
  call<T>(method: string, parts: string[], body?: unknown): Promise<T> {
    return this.request<T>(method, parts, body);
  }

  private async request<T>(
    method: string,
    parts: string[],
    body?: unknown,
    query = ''
  ): Promise<T> {
    const url =
      URLExt.join(
        this.serverSettings.baseUrl,
        API_ROOT,
        ...parts.map(encodeURIComponent)
      ) + query;
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { 'Content-Type': 'application/json' };
    }
    let response: Response;
    try {
      response = await ServerConnection.makeRequest(
        url,
        init,
        this.serverSettings
      );
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this._failing = true;
      throw new HermesApiError(`Cannot reach the Jupyter server: ${reason}`, 0);
    }
    const text = await response.text();
    let data: unknown = null;
    if (text.length > 0) {
      try {
        data = JSON.parse(text);
      } catch {
        data = text;
      }
    }
    this._answered(response.status);
    if (!response.ok) {
      const { message, plain, detail } = errorMessage(data, response);
      throw new HermesApiError(message, response.status, plain, detail);
    }
    return data as T;
  }

  /** Any answer but a server failure means the server is back (a 404 or 409 is an answer too). */
  private _answered(status: number): void {
    if (serverDown(status)) {
      this._failing = true;
    } else if (this._failing) {
      this._failing = false;
      this._reconnected.emit();
    }
  }

  private _failing = false;
  private _reconnected = new Signal<this, void>(this);
}

function unwrapSession(body: ISession | { session: ISession }): ISession {
  const session = 'session' in body && body.session ? body.session : body;
  return session as ISession;
}

/** The server's error: its plain sentence and technical detail when it sent JSON, else a status line. */
function errorMessage(data: unknown, response: Response): { message: string; plain: boolean; detail: string } {
  if (data && typeof data === 'object' && 'message' in data) {
    const { message, detail } = data as { message: unknown; detail?: unknown };
    if (typeof message === 'string' && message) {
      return { message, plain: true, detail: typeof detail === 'string' ? detail : '' };
    }
  }
  if (typeof data === 'string' && data.trim() && data.length < 300) {
    return { message: data.trim(), plain: false, detail: '' };
  }
  return { message: `${response.status} ${response.statusText || 'request failed'}`, plain: false, detail: '' };
}
