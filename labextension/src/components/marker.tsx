/**
 * Interrupted, cancel, error and info markers: styled as notices, never as an answer.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import React from 'react';

import { IMarkerRow } from '../model/rows';
import { Markdown } from './messages/markdown';

const TITLES: { [variant: string]: string } = {
  interrupted: 'Interrupted',
  cancel: 'Cancelled',
  error: 'Error',
  info: 'Notice'
};

export const Marker = React.memo(function Marker(props: {
  row: IMarkerRow;
  rendermime: IRenderMimeRegistry;
}): JSX.Element {
  const { row, rendermime } = props;
  return (
    <div
      className={`jp-HermesMarker jp-mod-${row.variant}`}
      data-testid="hermes-marker"
      data-kind={row.variant}
      data-cause={row.cause ?? ''}
      data-row-id={row.id}
      role="status"
    >
      <div className="jp-HermesMarker-title">
        {TITLES[row.variant]}
        {row.pendingRetry ? ' · recovery pending, reload to retry' : ''}
      </div>
      <Markdown text={row.text} rendermime={rendermime} />
    </div>
  );
});
