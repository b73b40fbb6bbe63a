/**
 * The routes of agent edits (docs/notebook-edits.md, docs/autonomy.md): undo or keep what a run
 * changed in its notebook, and set how much the agent may do in a session. All three are a
 * person's acts: the server refuses them to a kernel's credential.
 */
import type { Autonomy } from '../model/autonomy';
import { IUndoAnswer, readUndoAnswer } from '../model/cell-review';
import type { HermesClient } from './client';

/** Restore what the run changed (all its cells, or those named) unless someone changed a cell since. */
export async function undoCells(client: HermesClient, runId: string, cellIds?: string[]): Promise<IUndoAnswer> {
  const body = cellIds ? { cell_ids: cellIds } : {};
  return readUndoAnswer(await client.call<unknown>('POST', ['runs', runId, 'notebook', 'undo'], body));
}

/** Record that the person keeps the run's changes (all its cells, or those named). */
export async function keepCells(client: HermesClient, runId: string, cellIds?: string[]): Promise<void> {
  await client.call<unknown>('POST', ['runs', runId, 'notebook', 'keep'], cellIds ? { cell_ids: cellIds } : {});
}

/** Set the session's autonomy; the server answers 403 in words above its cap. */
export async function setAutonomy(client: HermesClient, sessionId: string, autonomy: Autonomy): Promise<unknown> {
  return client.call<unknown>('PATCH', ['sessions', sessionId], { autonomy });
}
