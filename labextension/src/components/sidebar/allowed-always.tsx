/**
 * What "Always allow" answers allow (the agent remembers them for every
 * session), in a fold of the panel, each revocable. Read when the fold opens;
 * an empty list says what would put something there (docs/sidebar.md).
 */
import React, { useState } from 'react';

import { HermesClient } from '../../api/client';
import { IAllowedAlways } from '../../api/contract';
import { IPlainError, plainError } from '../../api/plain-errors';

/** The fold's text when nothing is allowed always: that it is empty, and how a command gets there. */
export const NOTHING_ALLOWED_ALWAYS =
  'No commands are allowed always: Hermes asks before each one. Answer “Always allow” when it asks, and that kind of command is listed here (Revoke makes Hermes ask again).';

export function AllowedAlways(props: { client: HermesClient }): JSX.Element {
  const { client } = props;
  const [items, setItems] = useState<IAllowedAlways[] | null>(null);
  const [unavailable, setUnavailable] = useState<string[]>([]);
  const [error, setError] = useState<IPlainError | null>(null);
  const run = async (call: () => Promise<{ always: IAllowedAlways[]; unavailable?: string[] }>) => {
    setError(null);
    try {
      const answer = await call();
      setItems(answer.always);
      setUnavailable(answer.unavailable ?? []);
    } catch (err) {
      setError(plainError(err));
    }
  };
  return (
    <details
      className="jp-HermesAlways"
      data-testid="hermes-allowed-always"
      onToggle={event => (event.currentTarget.open ? void run(() => client.allowedAlways()) : undefined)}
    >
      <summary>Allowed always</summary>
      <AllowedAlwaysList
        items={items}
        unavailable={unavailable}
        error={error}
        onRevoke={item => void run(() => client.revokeAlways(item))}
      />
    </details>
  );
}

/** The fold's body: reading, the list, or why it is empty; `items` null while the first answer is awaited. */
export function AllowedAlwaysList(props: {
  items: IAllowedAlways[] | null;
  unavailable: string[];
  error: IPlainError | null;
  onRevoke: (item: IAllowedAlways) => void;
}): JSX.Element {
  const { items, unavailable, error } = props;
  return (
    <>
      {items === null && !error && <div className="jp-HermesAlways-empty">Reading what is allowed always…</div>}
      {unavailable.length > 0 && (
        <div className="jp-HermesAlways-empty" data-testid="hermes-allowed-always-unavailable">
          {unavailable.join(', ')} could not be asked (it is not running here), so its list is not shown.
        </div>
      )}
      {items !== null && items.length === 0 && unavailable.length === 0 && (
        <div className="jp-HermesAlways-empty" data-testid="hermes-allowed-always-empty">
          {NOTHING_ALLOWED_ALWAYS}
        </div>
      )}
      {items !== null && items.length > 0 && (
        <ul className="jp-HermesAlways-list">
          {items.map(item => (
            <li key={`${item.backend}:${item.pattern}`} data-testid="hermes-allowed-always-item">
              <code>{item.pattern}</code>
              <button
                className="jp-Button jp-mod-minimal jp-mod-styled"
                data-testid="hermes-allowed-always-revoke"
                title="Ask again before doing this"
                onClick={() => props.onRevoke(item)}
              >
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
      {error && (
        <div className="jp-HermesError" title={error.details}>
          {error.text}
        </div>
      )}
    </>
  );
}
