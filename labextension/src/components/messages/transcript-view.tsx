/**
 * The transcript list. Long transcripts render incrementally: only the last
 * window of rows is mounted; earlier rows are added a page at a time when the
 * reader scrolls to the top (or clicks "Show earlier"). The view sticks to the
 * bottom while new text arrives unless the reader has scrolled up.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import React, { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';

import { DisplayRow } from '../../api/rows';
import { groupCellChanges } from '../../model/cell-changes';
import { CellChangeCard } from '../cards/cell-change-card';
import { MessageRow } from './message-row';

/** Rows mounted at first, and added per page when scrolling up. */
const PAGE_ROWS = 40;
/** Distance from the bottom (px) within which the view follows new text. */
const STICK_PX = 48;
/** How long after a wheel, touch or key the scroll that follows is the reader's (ms). */
const INTENT_MS = 600;

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
  const [windowSize, setWindowSize] = useState(PAGE_ROWS);
  const scroller = useRef<HTMLDivElement>(null);
  const sentinel = useRef<HTMLDivElement>(null);
  const content = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const anchor = useRef<{ height: number; top: number } | null>(null);

  useEffect(() => {
    setWindowSize(PAGE_ROWS);
    stick.current = true;
  }, [resetKey]);

  // The reader's own new turn brings the view back to the bottom.
  const last = rows[rows.length - 1];
  const lastUserId = last && last.kind === 'user' ? last.id : null;
  const seenUserId = useRef<string | null>(null);
  if (lastUserId && lastUserId !== seenUserId.current) {
    stick.current = true;
  }
  seenUserId.current = lastUserId;

  const start = Math.max(0, rows.length - windowSize);
  const hidden = start;

  const showEarlier = () => {
    const node = scroller.current;
    if (node) {
      anchor.current = { height: node.scrollHeight, top: node.scrollTop };
    }
    setWindowSize(size => size + PAGE_ROWS);
  };

  useEffect(() => {
    const node = sentinel.current;
    const root = scroller.current;
    if (!node || !root || hidden === 0 || typeof IntersectionObserver === 'undefined') {
      return;
    }
    const observer = new IntersectionObserver(
      entries => {
        if (entries.some(e => e.isIntersecting) && !stick.current) {
          showEarlier();
        }
      },
      { root }
    );
    observer.observe(node);
    return () => observer.disconnect();
  }, [hidden, resetKey]);

  useLayoutEffect(() => {
    const node = scroller.current;
    if (!node) {
      return;
    }
    if (anchor.current) {
      // Keep the reader's place when earlier rows are added above.
      node.scrollTop = anchor.current.top + (node.scrollHeight - anchor.current.height);
      anchor.current = null;
    } else if (stick.current) {
      node.scrollTop = node.scrollHeight;
    }
  });

  useEffect(() => {
    // Markdown renders asynchronously: follow height changes while stuck.
    const inner = content.current;
    if (!inner || typeof ResizeObserver === 'undefined') {
      return;
    }
    const observer = new ResizeObserver(() => {
      const node = scroller.current;
      if (node && stick.current && !anchor.current) {
        node.scrollTop = node.scrollHeight;
      }
    });
    observer.observe(inner);
    return () => observer.disconnect();
  }, []);

  // Only the reader scrolling up unsticks the view. The browser also scrolls on its own:
  // scroll anchoring when rows above the viewport finish rendering their markdown, and a
  // clamp when a settled row replaces its streaming form with a shorter one. Taking those
  // for the reader would leave a long transcript short of its bottom, so a scroll up counts
  // only right after the reader's wheel, touch, key or scrollbar press.
  const lastTop = useRef(0);
  const intentUntil = useRef(0);
  const pressed = useRef(false);
  const noteIntent = () => {
    intentUntil.current = Date.now() + INTENT_MS;
  };
  const onPress = () => {
    // A scrollbar drag may end outside the transcript: listen on the window for its release.
    pressed.current = true;
    const release = () => {
      pressed.current = false;
      noteIntent();
    };
    window.addEventListener('pointerup', release, { once: true });
    window.addEventListener('pointercancel', release, { once: true });
  };
  const onScroll = () => {
    const node = scroller.current;
    if (node) {
      const byReader = pressed.current || Date.now() < intentUntil.current;
      if (node.scrollHeight - node.scrollTop - node.clientHeight < STICK_PX) {
        stick.current = true;
      } else if (byReader && node.scrollTop < lastTop.current) {
        stick.current = false;
      }
      lastTop.current = node.scrollTop;
    }
  };

  return (
    <div
      className="jp-HermesTranscript"
      data-testid={props.testId ?? 'hermes-transcript'}
      data-row-count={rows.length}
      ref={scroller}
      onScroll={onScroll}
      onWheel={noteIntent}
      onTouchMove={noteIntent}
      onKeyDown={noteIntent}
      onPointerDown={onPress}
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
