/**
 * The transcript list. Long transcripts render incrementally: only the last
 * window of rows is mounted; earlier rows are added a page at a time when the
 * reader scrolls to the top (or clicks "Show earlier"). The view sticks to the
 * bottom while new text arrives unless the reader has scrolled up. All of the
 * scrolling is one hook (use-sticky-scroll.ts).
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import React, { useMemo } from 'react';

import { DisplayRow } from '../../api/rows';
import { groupCellChanges } from '../../model/cell-changes';
import { CellChangeCard } from '../cards/cell-change-card';
import { MessageRow } from './message-row';
import { PAGE_ROWS, useStickyScroll } from './use-sticky-scroll';

export interface ITranscriptViewProps {
  rows: readonly DisplayRow[];
  rendermime: IRenderMimeRegistry;
  /** Changing this resets the window (another session was opened). */
  resetKey: string;
  /** Id of the row still receiving tokens. */
  streamingId?: string | null;
  testId?: string;
}

export function TranscriptView(props: ITranscriptViewProps): JSX.Element {
  const { rendermime, resetKey } = props;
  // A turn's changed cells are one card (model/cell-changes.ts).
  const rows = useMemo(() => groupCellChanges(props.rows), [props.rows]);
  const last = rows[rows.length - 1];
  const { scroller, content, sentinel, start, showEarlier, handlers } = useStickyScroll(
    rows.length,
    resetKey,
    last && last.kind === 'user' ? last.id : null
  );
  const hidden = start;

  return (
    <div
      className="jp-HermesTranscript"
      data-testid={props.testId ?? 'hermes-transcript'}
      data-row-count={rows.length}
      ref={scroller}
      {...handlers}
    >
      {hidden > 0 && (
        <div ref={sentinel} className="jp-HermesTranscript-earlier">
          <button
            className="jp-Button jp-mod-minimal jp-mod-styled"
            data-testid="hermes-show-earlier"
            onClick={showEarlier}
          >
            Show {Math.min(hidden, PAGE_ROWS)} earlier of {hidden}
          </button>
        </div>
      )}
      <div className="jp-HermesTranscript-rows" ref={content}>
        {rows.slice(start).map(row =>
          row.kind === 'cell_changes' ? (
            <CellChangeCard key={row.id} group={row} />
          ) : (
            <MessageRow key={row.id} row={row} rendermime={rendermime} streaming={row.id === props.streamingId} />
          )
        )}
      </div>
    </div>
  );
}
