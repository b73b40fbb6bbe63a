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
import { DiffView, wholeSource } from './diff-view';

type Busy = null | 'all' | 'rewind' | string;
type Problem = { text: string; details?: string };

/** A group is rebuilt whenever its transcript changes; the card re-renders only when its content did. */
const sameGroup = (a: { group: ICellChangeGroup }, b: { group: ICellChangeGroup }) =>
  a.group === b.group || JSON.stringify(a.group) === JSON.stringify(b.group);

export const CellChangeCard = React.memo(function CellChangeCard(props: { group: ICellChangeGroup }): JSX.Element {
  const { group } = props;
  const actions = React.useContext(CardActions).cellChanges ?? sharedCellChangeActions();
  useSignal(actions?.changed ?? null);
  useEffect(() => actions?.seen?.(group.changes), [actions, group]);
  const acts = useCardActs(group.run_id, actions);
  const reviews = group.cells.map(cell => (actions ? actions.reviewOf(group.run_id, cell) : (cell.review ?? 'pending')));
  const open = group.cells.filter((cell, i) => reviewable(cell, reviews[i])).map(cell => cell.cell_id);
  const disabled = acts.busy !== null;
  return (
    <div
      role="group"
      className="jp-HermesCellChanges"
      data-testid="hermes-cell-changes"
      data-hermes-cell-changes={group.run_id}
      data-row-id={group.id}
      aria-label="Cells this turn changed"
    >
      <TurnHead group={group} canAct={!!actions && open.length > 0} disabled={disabled}
        onKeepAll={() => acts.keep('all', open)} onUndoAll={() => acts.undo('all')} />
      <ul className="jp-HermesCellChanges-list">
        {group.cells.map((cell, i) => (
          <CellItem
            key={cell.cell_id}
            cell={cell}
            review={reviews[i]}
            disabled={disabled}
            canAct={!!actions}
            onKeep={() => acts.keep(cell.cell_id, [cell.cell_id])}
            onUndo={() => acts.undo(cell.cell_id, [cell.cell_id])}
          />
        ))}
      </ul>
      <ActOutcome outcome={acts.outcome} problem={acts.problem} />
      {actions && <Rewind actions={actions} runId={group.run_id} disabled={disabled} onRewind={acts.rewind} />}
    </div>
  );
}, sameGroup);

/**
 * Keep / Undo / Rewind for one card: one at a time (the buttons are disabled while one runs),
 * its answer in words as the card's outcome, a failure as its problem.
 */
function useCardActs(runId: string, actions: ICellChangeActions | null) {
  const [busy, setBusy] = useState<Busy>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
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
  return {
    busy,
    outcome,
    problem,
    undo: (key: Busy, cellIds?: string[]) => void act(key, async () => undoAnswerWords(await actions!.undo(runId, cellIds))),
    keep: (key: Busy, cellIds?: string[]) => void act(key, async () => (await actions!.keep(runId, cellIds), null)),
    rewind: () => void act('rewind', async () => undoAnswerWords(await actions!.rewind(runId)))
  };
}

/** "Changed N cells in <notebook>", with Keep all / Undo all while any cell is still to review. */
function TurnHead(props: {
  group: ICellChangeGroup;
  canAct: boolean;
  disabled: boolean;
  onKeepAll: () => void;
  onUndoAll: () => void;
}): JSX.Element {
  const { group } = props;
  const where = group.cells[0]?.path;
  return (
    <div className="jp-HermesCellChanges-head">
      <span className="jp-HermesCellChanges-title">
        Changed {group.cells.length === 1 ? '1 cell' : `${group.cells.length} cells`}
        {where ? ` in ${where}` : ''}
      </span>
      {props.canAct && (
        <span className="jp-HermesCellChanges-actions">
          <button
            className="jp-Button jp-mod-accept jp-mod-styled"
            data-hermes-action="keep-all"
            disabled={props.disabled}
            title="Keep every change of this turn"
            onClick={props.onKeepAll}
          >
            Keep all
          </button>
          <button
            className="jp-Button jp-mod-reject jp-mod-styled"
            data-hermes-action="undo-all"
            disabled={props.disabled}
            title="Put every cell this turn changed back as it was, unless someone changed it since"
            onClick={props.onUndoAll}
          >
            Undo all
          </button>
        </span>
      )}
    </div>
  );
}

/** What the last Keep / Undo / Rewind did, or why it failed (the details in the tooltip). */
function ActOutcome(props: { outcome: string | null; problem: Problem | null }): JSX.Element {
  const { outcome, problem } = props;
  return (
    <>
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
    </>
  );
}

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
            <CellButton action="keep" cell={cell} disabled={props.disabled} onClick={props.onKeep} />
            <CellButton action="undo" cell={cell} disabled={props.disabled} onClick={props.onUndo} />
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

/** Keep or Undo for one cell; its accessible name says which cell. */
function CellButton(props: { action: 'keep' | 'undo'; cell: ICellSummary; disabled: boolean; onClick: () => void }): JSX.Element {
  const verb = props.action === 'keep' ? 'Keep' : 'Undo';
  return (
    <button
      className="jp-Button jp-mod-minimal jp-mod-styled"
      data-hermes-action={props.action}
      disabled={props.disabled}
      aria-label={`${verb} this change (${cellTitle(props.cell)})`}
      onClick={props.onClick}
    >
      {verb}
    </button>
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
      : after === null
        ? wholeSource(before ?? '', 'remove')
        : wholeSource(after, 'add');
  return <DiffView lines={lines} attributes={{ 'data-hermes-diff': '', 'aria-label': 'What changed in the source' }} />;
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
