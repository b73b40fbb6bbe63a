/**
 * Scrolling a transcript, in one hook: the view sticks to the bottom while new text arrives unless
 * the reader scrolled up, keeps the reader's place when earlier rows are added above, and mounts
 * only the last window of rows, adding a page when the reader reaches the top.
 */
import { RefObject, useEffect, useLayoutEffect, useRef, useState } from 'react';

/** Rows mounted at first, and added per page when scrolling up. */
export const PAGE_ROWS = 40;
/** Distance from the bottom (px) within which the view follows new text. */
const STICK_PX = 48;
/** How long after a wheel, touch or key the scroll that follows is the reader's (ms). */
const INTENT_MS = 600;

export interface IStickyScroll {
  /** The scrolling element, its content (watched for height changes) and the top sentinel. */
  scroller: RefObject<HTMLDivElement>;
  content: RefObject<HTMLDivElement>;
  sentinel: RefObject<HTMLDivElement>;
  /** Index of the first mounted row, which is also how many rows are not mounted. */
  start: number;
  /** Mount a page of earlier rows, keeping the reader's place. */
  showEarlier: () => void;
  /** The scroller's event handlers (spread on it). */
  handlers: {
    onScroll: () => void;
    onWheel: () => void;
    onTouchMove: () => void;
    onKeyDown: () => void;
    onPointerDown: () => void;
  };
}

/**
 * `count` rows, the last `lastUserId` of them the reader's own new turn (which brings the view back to
 * the bottom); `resetKey` changing (another session) resets the window and sticks again.
 */
export function useStickyScroll(count: number, resetKey: string, lastUserId: string | null): IStickyScroll {
  const [windowSize, setWindowSize] = useState(PAGE_ROWS);
  const scroller = useRef<HTMLDivElement>(null);
  const content = useRef<HTMLDivElement>(null);
  const sentinel = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const anchor = useRef<{ height: number; top: number } | null>(null);

  useEffect(() => {
    setWindowSize(PAGE_ROWS);
    stick.current = true;
  }, [resetKey]);

  const seenUserId = useRef<string | null>(null);
  if (lastUserId && lastUserId !== seenUserId.current) {
    stick.current = true;
  }
  seenUserId.current = lastUserId;

  const start = Math.max(0, count - windowSize);
  const showEarlier = () => {
    const node = scroller.current;
    if (node) {
      anchor.current = { height: node.scrollHeight, top: node.scrollTop };
    }
    setWindowSize(size => size + PAGE_ROWS);
  };

  useEarlierOnTop(sentinel, scroller, start, resetKey, () => !stick.current && showEarlier());

  useFollowBottom(scroller, content, stick, anchor);

  return { scroller, content, sentinel, start, showEarlier, handlers: useReaderScroll(scroller, stick) };
}

/**
 * Puts the view where it belongs after each render: the reader's place when earlier rows were added
 * above, else the bottom while stuck, and again when the content grows (markdown renders late).
 */
function useFollowBottom(
  scroller: RefObject<HTMLDivElement>,
  content: RefObject<HTMLDivElement>,
  stick: { current: boolean },
  anchor: { current: { height: number; top: number } | null }
): void {
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
}

/** Calls `reached` when the top sentinel comes into view (while rows are still hidden). */
function useEarlierOnTop(
  sentinel: RefObject<HTMLDivElement>,
  scroller: RefObject<HTMLDivElement>,
  hidden: number,
  resetKey: string,
  reached: () => void
): void {
  useEffect(() => {
    const node = sentinel.current;
    const root = scroller.current;
    if (!node || !root || hidden === 0 || typeof IntersectionObserver === 'undefined') {
      return;
    }
    const observer = new IntersectionObserver(entries => entries.some(e => e.isIntersecting) && reached(), { root });
    observer.observe(node);
    return () => observer.disconnect();
  }, [hidden, resetKey]);
}

/**
 * Only the reader scrolling up unsticks the view. The browser also scrolls on its own: scroll
 * anchoring when rows above the viewport finish rendering their markdown, and a clamp when a
 * settled row replaces its streaming form with a shorter one. Taking those for the reader would
 * leave a long transcript short of its bottom, so a scroll up counts only right after the
 * reader's wheel, touch, key or scrollbar press.
 */
function useReaderScroll(scroller: RefObject<HTMLDivElement>, stick: { current: boolean }): IStickyScroll['handlers'] {
  const lastTop = useRef(0);
  const intentUntil = useRef(0);
  const pressed = useRef(false);
  const noteIntent = () => {
    intentUntil.current = Date.now() + INTENT_MS;
  };
  const onPointerDown = () => {
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
  return { onScroll, onWheel: noteIntent, onTouchMove: noteIntent, onKeyDown: noteIntent, onPointerDown };
}
