/**
 * What "Always allow" answers allow (the agent remembers them for every
 * session), in a fold of the panel, each revocable. Read when the fold opens.
 */
import React, { useState } from 'react';

import { HermesClient } from '../../api/client';
import { IAllowedAlways } from '../../api/contract';
import { IPlainError, plainError } from '../../api/plain-errors';

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
      {unavailable.length > 0 && (
        <div className="jp-HermesAlways-empty" data-testid="hermes-allowed-always-unavailable">
          {unavailable.join(', ')} could not be asked (it is not running here), so its list is not shown.
        </div>
      )}
      {items !== null && items.length === 0 && unavailable.length === 0 && (
        <div className="jp-HermesAlways-empty">
          Nothing is allowed always. An approval answered “Always allow” is listed here.
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
                onClick={() => void run(() => client.revokeAlways(item))}
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
    </details>
  );
}
