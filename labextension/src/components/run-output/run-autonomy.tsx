/**
 * The autonomy a `%%hermes` cell's run had (docs/autonomy.md), in its output header, where the
 * run payload says it (`autonomy`); older outputs say nothing and show nothing.
 */
import React from 'react';

import type { IRunOutputPayload } from '../../api/contract';
import { AUTONOMY_HELP, AUTONOMY_WORDS, isAutonomy } from '../../model/autonomy';

export function RunAutonomy(props: { payload: IRunOutputPayload | null }): JSX.Element | null {
  const level = (props.payload as { autonomy?: unknown } | null)?.autonomy;
  if (!isAutonomy(level)) {
    return null;
  }
  return (
    <span className="jp-HermesRunOutput-autonomy" data-hermes-run-autonomy={level} title={AUTONOMY_HELP[level]}>
      {AUTONOMY_WORDS[level]}
    </span>
  );
}

