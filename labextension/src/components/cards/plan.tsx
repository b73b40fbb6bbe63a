/**
 * The agent's plan as a checklist (the latest plan replaces the items).
 */
import React from 'react';

import { IPlanRow } from '../../api/rows';

const MARKS = { pending: '☐', in_progress: '◔', completed: '☑' };

export const PlanChecklist = React.memo(function PlanChecklist(props: { row: IPlanRow }): JSX.Element {
  return (
    <ul className="jp-HermesPlan" data-testid="hermes-plan" data-row-id={props.row.id}>
      {props.row.items.map((item, i) => (
        <li key={i} className={`jp-HermesPlan-item jp-mod-${item.status}`} data-status={item.status}>
          <span className="jp-HermesPlan-mark" aria-hidden="true">{MARKS[item.status]}</span>
          <span className="jp-HermesPlan-text">{item.text}</span>
        </li>
      ))}
    </ul>
  );
});
