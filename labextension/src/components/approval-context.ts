/**
 * How a card answers an approval: provided by the views that talk to the server
 * (sidebar, run output). Without a provider, approval cards show no buttons.
 */
import React from 'react';

export type AnswerApproval = (runId: string, approvalId: string, choice: string) => Promise<unknown>;

export const ApprovalContext = React.createContext<AnswerApproval | null>(null);
