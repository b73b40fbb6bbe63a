/**
 * The sidebar's one notice (see model/notice.ts for which one wins): a sentence, the technical
 * details in a fold, and a ✕ where the person can put it away.
 */
import React from 'react';

import { INotice, NoticeKind } from '../../model/notice';

/** Stable selectors, one per kind (labextension/README.md). */
const TEST_IDS: { [kind in NoticeKind]: string } = {
  offline: 'hermes-offline',
  error: 'hermes-error',
  sessions: 'hermes-sessions-error',
  recovered: 'hermes-recovery-banner'
};

export function Notice(props: { notice: INotice | null; onDismiss: (what: 'error' | 'recovered') => void }): JSX.Element | null {
  const { notice, onDismiss } = props;
  if (!notice) {
    return null;
  }
  const dismiss = notice.dismiss;
  return (
    <div
      className={notice.kind === 'recovered' ? 'jp-HermesBanner' : 'jp-HermesError'}
      data-testid={TEST_IDS[notice.kind]}
      data-kind={notice.kind}
      role={notice.kind === 'recovered' ? 'status' : 'alert'}
    >
      <span>
        {notice.text}
        {notice.details && (
          <details className="jp-HermesError-details">
            <summary>Details</summary>
            {notice.details}
          </details>
        )}
      </span>
      {dismiss && (
        <button
          className="jp-HermesIconButton"
          data-testid={dismiss === 'recovered' ? 'hermes-banner-dismiss' : 'hermes-error-dismiss'}
          title="Dismiss"
          aria-label="Dismiss"
          onClick={() => onDismiss(dismiss)}
        >
          ✕
        </button>
      )}
    </div>
  );
}
