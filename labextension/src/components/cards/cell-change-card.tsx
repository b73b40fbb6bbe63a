/**
 * The cells one turn changed in its notebook (docs/notebook-edits.md): one card per turn, one
 * item per cell (what was done, a line diff of its source, its last run), with Keep / Undo per
 * cell and Keep all / Undo all for the turn. Undo never overwrites a cell someone changed since:
 * the card says so. "Rewind to before this turn" undoes this turn and every later one.
 */
import React, { useEffect, useState } from 'react';

import type { ICellChangeGroup, ICellSummary } from '../../model/cell-changes';
import { CellReview, cellTitle, reviewable, reviewWords, runWords, undoAnswerWords } from '../../model/cell-review';
import { lineDiff } from '../../model/line-diff';
import { plainError } from '../../api/plain-errors';
import { useSignal } from '../use-signal';
import { CardActions } from './card-actions';
import { ICellChangeActions, sharedCellChangeActions } from './cell-change-actions';

type Busy = null | 'all' | 'rewind' | string;

/** A group is rebuilt whenever its transcript changes; the card re-renders only when its content did. */
const sameGroup = (a: { group: ICellChangeGroup }, b: { group: ICellChangeGroup }) =>
  a.group === b.group || JSON.stringify(a.group) === JSON.stringify(b.group);

export const CellChangeCard = React.memo(function CellChangeCard(props: { group: ICellChangeGroup }): JSX.Element {
  const { group } = props;
  const actions = React.useContext(CardActions).cellChanges ?? sharedCellChangeActions();
  useSignal(actions?.changed ?? null);
  useEffect(() => actions?.seen?.(group.changes), [actions, group]);
  const [busy, setBusy] = useState<Busy>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [problem, setProblem] = useState<{ text: string; details?: string } | null>(null);
  const reviews = group.cells.map(cell => (actions ? actions.reviewOf(group.run_id, cell) : (cell.review ?? 'pending')));
  const open = group.cells.filter((cell, i) => reviewable(cell, reviews[i])).map(cell => cell.cell_id);
  const act = async (key: Busy, what: () => Promise<string | null>) => {
    setBusy(key);
    setProblem(null);
    try {
      setOutcome(await what());
    } catch (error) {
      const plain = plainError(error);
      setProblem({ text: plain.text, details: plain.details });
    } finally {
      setBusy(null);
    }
  };
  const undo = (key: Busy, cellIds?: string[]) =>
    act(key, async () => undoAnswerWords(await actions!.undo(group.run_id, cellIds)));
  const keep = (key: Busy, cellIds?: string[]) =>
    act(key, async () => (await actions!.keep(group.run_id, cellIds), null));
  const where = group.cells[0]?.path;
  return (
    <div
      role="group"
      className="jp-HermesCellChanges"
      data-testid="hermes-cell-changes"
      data-hermes-cell-changes={group.run_id}
      data-row-id={group.id}
      aria-label="Cells this turn changed"
    >
      <div className="jp-HermesCellChanges-head">
        <span className="jp-HermesCellChanges-title">
          Changed {group.cells.length === 1 ? '1 cell' : `${group.cells.length} cells`}
          {where ? ` in ${where}` : ''}
        </span>
        {actions && open.length > 0 && (
          <span className="jp-HermesCellChanges-actions">
            <button
              className="jp-Button jp-mod-accept jp-mod-styled"
              data-hermes-action="keep-all"
              disabled={busy !== null}
              title="Keep every change of this turn"
              onClick={() => void keep('all', open)}
            >
              Keep all
            </button>
            <button
              className="jp-Button jp-mod-reject jp-mod-styled"
              data-hermes-action="undo-all"
              disabled={busy !== null}
              title="Put every cell this turn changed back as it was, unless someone changed it since"
              onClick={() => void undo('all')}
            >
              Undo all
            </button>
          </span>
        )}
      </div>
      <ul className="jp-HermesCellChanges-list">
        {group.cells.map((cell, i) => (
          <CellItem
            key={cell.cell_id}
            cell={cell}
            review={reviews[i]}
            disabled={busy !== null}
            canAct={!!actions}
            onKeep={() => void keep(cell.cell_id, [cell.cell_id])}
            onUndo={() => void undo(cell.cell_id, [cell.cell_id])}
          />
        ))}
      </ul>
      {outcome && (
        <div className="jp-HermesCellChanges-outcome" role="status" data-hermes-outcome="">
          {outcome}
        </div>
      )}
      {problem && (
        <div className="jp-HermesCellChanges-problem" role="alert" title={problem.details}>
          {problem.text}
        </div>
      )}
      {actions && <Rewind actions={actions} runId={group.run_id} disabled={busy !== null} onRewind={() =>
        act('rewind', async () => undoAnswerWords(await actions.rewind(group.run_id)))} />}
    </div>
  );
}, sameGroup);

function CellItem(props: {
  cell: ICellSummary;
  review: CellReview;
  disabled: boolean;
  canAct: boolean;
  onKeep: () => void;
  onUndo: () => void;
}): JSX.Element {
  const { cell, review } = props;
  const ran = runWords(cell);
  return (
    <li
      className={`jp-HermesCellChange jp-mod-${review}`}
      data-hermes-cell-change={cell.cell_id}
      data-hermes-review={review}
    >
      <div className="jp-HermesCellChange-head">
        <span className="jp-HermesCellChange-title">{cellTitle(cell)}</span>
        {props.canAct && reviewable(cell, review) && (
          <span className="jp-HermesCellChange-actions">
            <button
              className="jp-Button jp-mod-minimal jp-mod-styled"
              data-hermes-action="keep"
              disabled={props.disabled}
              aria-label={`Keep this change (${cellTitle(cell)})`}
              onClick={props.onKeep}
            >
              Keep
            </button>
            <button
              className="jp-Button jp-mod-minimal jp-mod-styled"
              data-hermes-action="undo"
              disabled={props.disabled}
              aria-label={`Undo this change (${cellTitle(cell)})`}
              onClick={props.onUndo}
            >
              Undo
            </button>
          </span>
        )}
      </div>
      {review !== 'pending' && (
        <div className="jp-HermesCellChange-review" data-hermes-review-words="">
          {reviewWords(review)}
        </div>
      )}
      {review !== 'undone' && <SourceDiff cell={cell} />}
      {ran && review !== 'undone' && <div className="jp-HermesCellChange-run">{ran}</div>}
      {cell.refused.map((r, i) => (
        <div key={i} className="jp-HermesCellChange-refused">
          Not done: {r.why}
        </div>
      ))}
      <details className="jp-HermesCellChange-details">
        <summary>Details</summary>
        cell {cell.cell_id}
      </details>
    </li>
  );
}

/** The cell's source before and after the turn: a line diff for an edit, all lines for an insert or delete. */
function SourceDiff(props: { cell: ICellSummary }): JSX.Element | null {
  const { before, after } = props.cell;
  if (before === after) {
    return null;
  }
  const lines =
    before !== null && after !== null
      ? lineDiff(before, after)
      : (after ?? before ?? '').split('\n').map(text => ({ op: after === null ? ('remove' as const) : ('add' as const), text }));
  return (
    <pre className="jp-HermesProposal-diff" data-hermes-diff="" tabIndex={0} aria-label="What changed in the source">
      {lines.map((line, i) => (
        <div key={i} className={`jp-HermesProposal-line jp-mod-${line.op}`}>
          <span className="jp-HermesProposal-sign" aria-hidden="true">
            {line.op === 'add' ? '+' : line.op === 'remove' ? '−' : ' '}
          </span>
          {line.text}
        </div>
      ))}
    </pre>
  );
}

/** "Rewind to before this turn", with a second click to confirm (it undoes later turns too). */
function Rewind(props: { actions: ICellChangeActions; runId: string; disabled: boolean; onRewind: () => void }): JSX.Element | null {
  const [confirming, setConfirming] = useState(false);
  const turns = props.actions.rewindCount(props.runId);
  if (turns < 2) {
    return null;  // the last turn that changed cells: that is Undo all
  }
  const scope = `this turn and the ${turns === 2 ? 'one' : turns - 1} after it`;
  return (
    <div className="jp-HermesCellChanges-rewind">
      {confirming ? (
        <>
          <span>Undo the notebook changes of {scope}?</span>
          <button
            className="jp-Button jp-mod-warn jp-mod-styled"
            data-hermes-action="rewind-confirm"
            disabled={props.disabled}
            onClick={() => {
              setConfirming(false);
              props.onRewind();
            }}
          >
            Rewind
          </button>
          <button className="jp-Button jp-mod-minimal jp-mod-styled" data-hermes-action="rewind-cancel" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </>
      ) : (
        <button
          className="jp-Button jp-mod-minimal jp-mod-styled"
          data-hermes-action="rewind"
          disabled={props.disabled}
          title={`Undo the notebook changes of ${scope}, newest first`}
          onClick={() => setConfirming(true)}
        >
          Rewind to before this turn
        </button>
      )}
    </div>
  );
}
