/**
 * Interrupted, cancelled and error markers, worded by the server: styled as
 * notices, never as an answer.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import React from 'react';

import { IMarkerRow } from '../../api/rows';
import { Markdown } from '../messages/markdown';

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
      <Markdown text={row.text} rendermime={rendermime} />
    </div>
  );
});
