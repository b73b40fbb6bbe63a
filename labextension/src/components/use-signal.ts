/**
 * React glue for Lumino signals: re-render a component when a model emits.
 */
import { ISignal } from '@lumino/signaling';
import { useEffect, useState } from 'react';

/** Re-render on every emission of `signal`; returns a counter that changes each time. */
export function useSignal<T>(signal: ISignal<T, unknown> | null): number {
  const [version, setVersion] = useState(0);
  useEffect(() => {
    if (!signal) {
      return;
    }
    const slot = () => setVersion(v => v + 1);
    signal.connect(slot);
    return () => {
      signal.disconnect(slot);
    };
  }, [signal]);
  return version;
}
