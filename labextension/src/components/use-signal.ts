/**
 * React glue for Lumino signals: re-render a component when a model emits.
 *
 * A component reads its model while rendering but can only subscribe after the
 * commit; an emission in between (a journal page that arrived in that frame) was
 * lost, and a finished run's output stayed "loading…". So each signal gets a
 * counter, connected the first time a component reads it, and the hook is an
 * external store (`useSyncExternalStore`): React compares the counter again once
 * it has subscribed and renders once more if anything was emitted meanwhile.
 */
import { ISignal } from '@lumino/signaling';
import { useCallback, useSyncExternalStore } from 'react';

type AnySignal = ISignal<unknown, unknown>;

const counters = new WeakMap<AnySignal, { emitted: number }>();

/** How many times `signal` emitted since a component first read it (counted from that read on). */
export function emissions(signal: AnySignal): number {
  let counter = counters.get(signal);
  if (!counter) {
    const made = { emitted: 0 };
    signal.connect(() => {
      made.emitted++;
    });
    counters.set(signal, made);
    counter = made;
  }
  return counter.emitted;
}

/** Re-render on every emission of `signal`; returns a counter that changes each time. */
export function useSignal<T>(signal: ISignal<T, unknown> | null): number {
  const subscribe = useCallback(
    (notify: () => void) => {
      if (!signal) {
        return () => undefined;
      }
      signal.connect(notify);
      return () => {
        signal.disconnect(notify);
      };
    },
    [signal]
  );
  const snapshot = () => (signal ? emissions(signal as AnySignal) : 0);
  return useSyncExternalStore(subscribe, snapshot, snapshot);
}
