/**
 * Markdown through JupyterLab's rendermime registry (sanitised, untrusted).
 *
 * While text streams in, renders are coalesced: at most one render in flight,
 * and the latest text wins, so a fast stream never queues stale renders.
 *
 * Maths: JupyterLab's markdown renderer typesets only when it is attached as a
 * Lumino widget; ours lives in a React host, so each render is typeset here with
 * the registry's latex typesetter (MathJax), when the text has maths at all.
 *
 * A view created again for the same row (a collaborator's output is replaced on
 * every kernel display update) paints the row's longest rendering of its text so
 * far at once, from a small cache by `cacheKey`, instead of an empty box until its
 * first render. The sidebar's view of the row may be ahead: a few renderings are
 * kept per row, so the cell's view still finds one of its own text.
 */
import { MimeModel } from '@jupyterlab/rendermime';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import React, { useEffect, useLayoutEffect, useRef } from 'react';

import { addCodeActions } from './code-actions';

/** Minimum time between two renders of a streaming text, in ms. */
const STREAM_RENDER_INTERVAL_MS = 80;
/** Text that may hold TeX: `$…$`, `$$…$$`, `\(…\)`, `\[…\]` or an environment. */
const MATH = /\$|\\\(|\\\[|\\begin\{/;
/** Rows whose last renderings are kept for a view created again. */
const CACHED_ROWS = 64;
/** Renderings kept per row: views of one row (cell and sidebar) render it at their own pace, every
 * 80 ms while it streams; 16 span more than a second, the time between two re-creations of a view. */
const KEPT_PER_ROW = 16;
const lastRendered = new Map<string, { text: string; html: string }[]>();

/** Keep a rendering of a row's text; a longer one replaces the renderings of its prefixes only
 * once there are more than `KEPT_PER_ROW`, so a view behind another still finds its own. */
function remember(key: string, text: string, html: string): void {
  const kept = (lastRendered.get(key) ?? []).filter(entry => entry.text !== text);
  kept.push({ text, html });
  kept.sort((a, b) => a.text.length - b.text.length);
  lastRendered.delete(key);
  lastRendered.set(key, kept.slice(-KEPT_PER_ROW));
  if (lastRendered.size > CACHED_ROWS) {
    lastRendered.delete(lastRendered.keys().next().value as string);
  }
}

/** The longest kept rendering of `text` so far (never one of a longer or another text). */
function recall(key: string | undefined, text: string): string | null {
  const kept = key === undefined ? undefined : lastRendered.get(key);
  let best: string | null = null;
  for (const entry of kept ?? []) {
    if (text.startsWith(entry.text)) {
      best = entry.html;  // sorted by length: the last match is the longest
    }
  }
  return best;
}

export interface IMarkdownProps {
  text: string;
  rendermime: IRenderMimeRegistry;
  streaming?: boolean;
  className?: string;
  /** The row's id: its last rendering is painted at once when a view of it is created again. */
  cacheKey?: string;
}

/** What the render loop of one view keeps across its renders (refs: they never cause a render). */
interface IRenderLoop {
  host: React.RefObject<HTMLDivElement>;
  renderer: React.MutableRefObject<IRenderMime.IRenderer | null>;
  /** The text still to render (null: shown). */
  latest: React.MutableRefObject<string | null>;
  /** The text last asked for, so the same text is not rendered twice. */
  requested: React.MutableRefObject<string | null>;
  busy: React.MutableRefObject<boolean>;
  streaming: React.MutableRefObject<boolean | undefined>;
  /** Ends the pause between two streaming renders early (the stream ended: show the final text now). */
  wake: React.MutableRefObject<(() => void) | null>;
}

function useRenderLoop(streaming: boolean | undefined): IRenderLoop {
  const host = useRef<HTMLDivElement>(null);
  const renderer = useRef<IRenderMime.IRenderer | null>(null);
  const latest = useRef<string | null>(null);
  const requested = useRef<string | null>(null);
  const busy = useRef(false);
  const streamingRef = useRef(streaming);
  streamingRef.current = streaming;
  const wake = useRef<(() => void) | null>(null);
  return { host, renderer, latest, requested, busy, streaming: streamingRef, wake };
}

export function Markdown(props: IMarkdownProps): JSX.Element {
  const { text, rendermime, streaming, className, cacheKey } = props;
  const loop = useRenderLoop(streaming);

  function request(value: string): void {
    if (value !== loop.requested.current) {
      loop.requested.current = value;
      loop.latest.current = value;
      void pump(loop, rendermime, cacheKey);
    }
  }

  // A layout effect: the cached rendering is in place before the browser paints.
  useLayoutEffect(() => {
    const widget = rendermime.createRenderer('text/markdown');
    loop.renderer.current = widget;
    const cached = recall(cacheKey, text);
    if (cached !== null) {
      widget.node.innerHTML = cached; // our own sanitised rendering of this row, moments ago
    }
    loop.host.current?.appendChild(widget.node);
    loop.requested.current = null;
    request(text);
    return () => {
      loop.renderer.current = null;
      widget.dispose();
    };
  }, [rendermime]);

  useEffect(() => request(text), [text]);
  useEffect(() => {
    if (!streaming) {
      loop.wake.current?.();
    }
  }, [streaming]);

  return <div ref={loop.host} className={className ?? 'jp-HermesMarkdown'} />;
}

/** `data-rendering` says a newer text is still to be shown (tests and screenshots wait for it). */
function setRendering(loop: IRenderLoop, value: boolean): void {
  if (loop.host.current) {
    loop.host.current.dataset.rendering = value ? 'true' : 'false';
  }
}

/** Render the latest text until none is left: one render in flight, paced while the text streams. */
async function pump(loop: IRenderLoop, rendermime: IRenderMimeRegistry, cacheKey: string | undefined): Promise<void> {
  if (loop.busy.current) {
    return;
  }
  loop.busy.current = true;
  setRendering(loop, true);
  try {
    while (loop.latest.current !== null && loop.renderer.current) {
      const widget = loop.renderer.current;
      const value = loop.latest.current;
      loop.latest.current = null;
      await renderText(rendermime, widget, value, () => loop.renderer.current === widget);
      if (cacheKey !== undefined && loop.renderer.current === widget) {
        remember(cacheKey, value, widget.node.innerHTML);
      }
      if (loop.streaming.current) {
        await pause(loop.wake);
      }
    }
  } finally {
    loop.busy.current = false;
    setRendering(loop, false);
  }
}

/** One render of a text into the widget: markdown (its source when that fails), code blocks, maths. */
async function renderText(
  rendermime: IRenderMimeRegistry,
  widget: IRenderMime.IRenderer,
  value: string,
  current: () => boolean
): Promise<void> {
  const model = new MimeModel({
    data: { 'text/markdown': value },
    trusted: false
  });
  try {
    await widget.renderModel(model);
  } catch (error) {
    widget.node.textContent = value;
  }
  focusableCode(widget.node);
  addCodeActions(widget.node);
  await typeset(rendermime, widget, value, current);
}

/** Wait between two streaming renders; `wake` ends the wait early. */
async function pause(wake: React.MutableRefObject<(() => void) | null>): Promise<void> {
  await new Promise<void>(resolve => {
    const timer = setTimeout(resolve, STREAM_RENDER_INTERVAL_MS);
    wake.current = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  wake.current = null;
}

/** Typeset the maths of a rendered text (a failed typeset leaves the TeX source readable). */
async function typeset(
  rendermime: IRenderMimeRegistry,
  widget: IRenderMime.IRenderer,
  text: string,
  current: () => boolean
): Promise<void> {
  const typesetter = rendermime.latexTypesetter;
  if (!typesetter || !MATH.test(text) || !current()) {
    return;
  }
  try {
    await typesetter.typeset(widget.node);
  } catch (error) {
    console.warn('hermes-jupyter: maths could not be typeset', error);
  }
}

/** Code blocks scroll sideways: keyboard users must be able to focus them to scroll. */
function focusableCode(node: HTMLElement): void {
  node.querySelectorAll('pre').forEach(pre => {
    pre.tabIndex = 0;
  });
}
