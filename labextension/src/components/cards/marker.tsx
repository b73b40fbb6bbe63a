/**
 * Interrupted, cancelled and error markers, worded by the server: styled as
 * notices, never as an answer.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import React, { useContext, useState } from 'react';

import { RUN_CONTROLS as W } from '../../api/generated';
import { IMarkerRow } from '../../api/rows';
import { Markdown } from '../messages/markdown';
import { CardActions } from './card-actions';

export const Marker = React.memo(function Marker(props: {
  row: IMarkerRow;
  rendermime: IRenderMimeRegistry;
}): JSX.Element {
  const { row, rendermime } = props;
  const marker = (
    <div
      className={`jp-HermesMarker jp-mod-${row.variant}`}
      data-testid="hermes-marker"
      data-kind={row.variant}
      data-cause={row.cause ?? ''}
      data-row-id={row.id}
      role="status"
    >
      <Markdown text={row.text} rendermime={rendermime} />
    </div>
  );
  // The button follows the marker (not inside it): the marker's words stay the server's alone.
  return row.continuable ? <>{marker}<ContinueButton /></> : marker;
});

/** Continue on the answer that ends the session: the rest streams in below the marker, which stays. */
function ContinueButton(): JSX.Element | null {
  const { continueTurn } = useContext(CardActions);
  const [busy, setBusy] = useState(false);
  if (!continueTurn) {
    return null;
  }
  const click = () => {
    setBusy(true);
    void continueTurn().finally(() => setBusy(false));
  };
  return (
    <button
      className="jp-Button jp-mod-accept jp-mod-styled jp-HermesMarker-continue"
      data-testid="hermes-continue"
      disabled={busy}
      title={W.continueTitle}
      onClick={click}
    >
      {busy ? W.continuing : W.continue}
    </button>
  );
}
